//! Parsing the options of a tool set: `#[tools(client = Name, crate =
//! path)]` and `#[toolset(..)]` inside `toolset!`.

use syn::meta::ParseNestedMeta;
use syn::{Ident, Path};

use super::{crate_path, key_of, set, unknown};
use crate::internals::keys;

/// What a tool set's options can say.
#[derive(Default)]
pub struct SetOptions {
    pub krate: Option<Path>,
    pub client: Option<Ident>,
}

impl SetOptions {
    /// Parses one `key = value` of the options.
    pub fn parse_key(&mut self, meta: ParseNestedMeta<'_>) -> syn::Result<()> {
        let key = key_of(&meta);
        match key.as_str() {
            keys::CRATE => set(&mut self.krate, crate_path(&meta)?, &meta),
            keys::CLIENT => {
                let ident: Ident = meta.value()?.parse()?;
                set(&mut self.client, ident, &meta)
            }
            other => Err(unknown(&meta, "tool set option", other, keys::SET_KEYS)),
        }
    }
}
