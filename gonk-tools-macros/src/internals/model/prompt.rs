//! The model of one `#[prompt]` fn: the fn and its attributes, with the
//! checks that concern one part of it: the fn's shape and its one
//! arguments struct. What the completions name is
//! [`check::prompt`](crate::internals::check::prompt).

use quote::ToTokens;
use syn::{Signature, Type, Visibility};

use super::classify::last_segment;
use super::{FnModel, Primitive};
use crate::internals::attr::primitive::PromptAttrs;
use crate::internals::errors::Errors;
use crate::internals::names;

/// What a prompt fn may return, for messages.
const RETURNS: &str =
    "its messages: `String` (one user message), `Vec<PromptMessage>` or `PromptResult`";

/// One `#[prompt]` fn.
pub struct PromptModel {
    pub attrs: PromptAttrs,
    pub f: FnModel,
}

impl PromptModel {
    /// Builds the model of `sig` (with its outer attributes' docs),
    /// reporting what is wrong with one part of it into `errors`.
    pub fn new(
        attrs: PromptAttrs,
        vis: Visibility,
        sig: &Signature,
        fn_attrs: &[syn::Attribute],
        errors: &mut Errors,
    ) -> Self {
        let f = FnModel::new(&attrs.item, vis, sig, fn_attrs);
        let model = PromptModel { attrs, f };
        model.check(errors);
        model
    }

    /// The arguments type, if the fn takes one.
    pub fn arguments(&self) -> Option<&Type> {
        self.f.values().next().map(|p| &p.ty)
    }

    fn check(&self, errors: &mut Errors) {
        let f = &self.f;
        f.check_primitive(Primitive::Prompt, RETURNS, errors);
        let mut first: Option<String> = None;
        for param in f.values() {
            let this = param.ty.to_token_stream().to_string();
            if let Some(first) = &first {
                errors.push_spanned(
                    &param.pat,
                    format!("a prompt takes one arguments struct, here `{first}`, whose fields are the prompt's arguments: make this a field of `{first}`, or take it as `State<T>` or `&ToolContext`"),
                );
                continue;
            }
            if let Some(what) = not_a_struct(&param.ty) {
                let args = format!("{}Args", names::unraw(&f.type_ident));
                let fields = match &param.ident {
                    Some(ident) => format!("pub {}: {this}", names::unraw(ident)),
                    None => "pub id: String, pub tag: Option<String>".to_owned(),
                };
                errors.push_spanned(
                    &param.ty,
                    format!("a prompt's arguments are a struct whose fields are the arguments, and this is {what}: write `struct {args} {{ {fields} }}` deriving `Deserialize` and `JsonSchema`, and take `args: {args}`"),
                );
            }
            first = Some(this);
        }
        let generated = names::unraw(&f.type_ident);
        let fix = format!("rename the type or set `#[prompt(type_name = {generated}Prompt)]`");
        let values = f.values().map(|p| &p.ty);
        f.check_type_clash(
            values.chain(f.ret.output()),
            Primitive::Prompt,
            &fix,
            errors,
        );
    }
}

/// Types that are certainly not a struct of arguments.
fn not_a_struct(ty: &Type) -> Option<String> {
    match ty {
        Type::Reference(_) | Type::Ptr(_) => Some("a reference".to_owned()),
        Type::Tuple(_) => Some("a tuple".to_owned()),
        Type::Array(_) | Type::Slice(_) => Some("an array".to_owned()),
        Type::ImplTrait(_) | Type::TraitObject(_) => Some("a trait type".to_owned()),
        Type::BareFn(_) | Type::Never(_) => Some("not data".to_owned()),
        _ => {
            let segment = last_segment(ty)?;
            let name = segment.ident.to_string();
            const SCALARS: &[&str] = &[
                "String", "str", "bool", "char", "u8", "u16", "u32", "u64", "u128", "usize", "i8",
                "i16", "i32", "i64", "i128", "isize", "f32", "f64", "Vec", "VecDeque", "Option",
                "HashMap", "BTreeMap", "HashSet", "BTreeSet", "Value", "Box", "Arc", "NoInput",
            ];
            SCALARS
                .contains(&name.as_str())
                .then(|| format!("`{name}`"))
        }
    }
}
