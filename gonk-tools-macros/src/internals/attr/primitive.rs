//! Parsing `#[resource("uri", ...)]` and `#[prompt(...)]` arguments with
//! the shared value shapes of [`attr`](super): every key named in
//! [`keys`], every misuse an error on its token,
//! all errors of one call collected.

use proc_macro2::{Span, TokenStream};
use syn::meta::ParseNestedMeta;
use syn::parse::{ParseStream, Parser};
use syn::spanned::Spanned;
use syn::{Expr, LitStr, Token};

use super::{
    choice_of, entries, field_entries, key_value, lit_str, serde_key, set, skip_entry, str_list,
    unknown, Choice, FieldKey, FieldName, ItemAttrs,
};
use crate::internals::errors::Errors;
use crate::internals::keys;

/// One `complete(var = path::to_fn)` entry: the template variable or
/// prompt argument (by its Rust name, or as a string by the name clients
/// see), and the completion fn.
pub struct Completer {
    pub target: FieldName,
    pub f: Expr,
}

/// The keys `#[resource]` and `#[prompt]` share besides [`ItemAttrs`]:
/// what a client shows, and the completions.
#[derive(Default)]
pub struct PrimitiveAttrs {
    pub title: Option<LitStr>,
    pub icons: Option<Vec<LitStr>>,
    pub complete: Option<Vec<Completer>>,
}

impl PrimitiveAttrs {
    /// Parses `key` if it is a shared one; `Ok(false)` when it is not.
    fn parse_key(&mut self, key: &str, meta: &ParseNestedMeta<'_>) -> syn::Result<bool> {
        match key {
            keys::TITLE => set(&mut self.title, lit_str(meta)?, meta)?,
            keys::COMPLETE => set(&mut self.complete, completers(meta)?, meta)?,
            keys::ICONS => set(&mut self.icons, icons(meta)?, meta)?,
            _ => return Ok(false),
        }
        Ok(true)
    }

    /// The completers, none when `complete` is absent.
    pub fn completers(&self) -> &[Completer] {
        self.complete.as_deref().unwrap_or_default()
    }
}

/// `icons = ["https://..", "data:image/png;base64,.."]`.
fn icons(meta: &ParseNestedMeta<'_>) -> syn::Result<Vec<LitStr>> {
    let icons = str_list(meta)?;
    for icon in &icons {
        let src = icon.value();
        if !(src.starts_with("https://") || src.starts_with("data:")) {
            return Err(syn::Error::new(
                icon.span(),
                format!("the icon `{src}` is neither an `https://` nor a `data:` URI: clients load icons only from those"),
            ));
        }
    }
    Ok(icons)
}

/// `complete(id = note_ids, tag = path::to::tags, "topic" = topics)`.
fn completers(meta: &ParseNestedMeta<'_>) -> syn::Result<Vec<Completer>> {
    const EXAMPLE: &str = "`complete(id = note_ids)` (the variable or argument `id`, completed by the async fn `note_ids`)";
    if !meta.input.peek(syn::token::Paren) {
        return Err(meta.error(format!(
            "`complete` takes a list of names and completion fns: {EXAMPLE}"
        )));
    }
    let mut list: Vec<Completer> = Vec::new();
    let mut errors = Errors::default();
    field_entries(meta, |key, input| {
        let result = completer(key, input, EXAMPLE).and_then(|completer| {
            let name = completer.target.name();
            if list.iter().any(|c| c.target.name() == name) {
                return Err(syn::Error::new_spanned(
                    &completer.target,
                    format!(
                        "`{}` already has a completion fn: give each one once",
                        completer.target
                    ),
                ));
            }
            Ok(completer)
        });
        match result {
            Ok(completer) => list.push(completer),
            Err(error) => {
                errors.push(error);
                skip_entry(input);
            }
        }
        Ok(())
    })?;
    errors.finish()?;
    if list.is_empty() {
        return Err(meta.error(format!("`complete()` names nothing: write {EXAMPLE}")));
    }
    Ok(list)
}

/// One `name = path::to_fn` of `complete(..)`.
fn completer(key: FieldKey, input: ParseStream<'_>, example: &str) -> syn::Result<Completer> {
    let target = match key {
        FieldKey::Path(path) => match path.get_ident() {
            Some(ident) => FieldName::Rust(ident.clone()),
            None => {
                return Err(syn::Error::new_spanned(
                    &path,
                    format!("`complete(..)` names a variable or argument by its identifier, or by the name clients see as a string: {example}"),
                ))
            }
        },
        FieldKey::Serde(name) => serde_key(name)?,
    };
    let value = key_value(&target, input, || {
        format!("`{target}` needs the fn that completes it: `{target} = path::to_fn`")
    })?;
    let f: Expr = value.parse()?;
    Ok(Completer { target, f })
}

/// Everything `#[resource(..)]` can say.
pub struct ResourceAttrs {
    /// The URI or URI template, the first argument.
    pub uri: LitStr,
    pub item: ItemAttrs,
    pub primitive: PrimitiveAttrs,
    pub mime_type: Option<LitStr>,
    pub size: Option<u64>,
    pub audience: Option<Vec<Choice>>,
    pub priority: Option<f64>,
}

/// Everything `#[prompt(..)]` can say.
#[derive(Default)]
pub struct PromptAttrs {
    pub item: ItemAttrs,
    pub primitive: PrimitiveAttrs,
}

const URI_FIRST: &str =
    "the URI comes first, without a key: `#[resource(\"notes://{id}\", name = \"note\")]`";

impl ResourceAttrs {
    /// Parses the arguments of `#[resource(..)]`.
    pub fn parse(args: TokenStream) -> syn::Result<ResourceAttrs> {
        let mut errors = Errors::default();
        let split = |input: ParseStream<'_>| -> syn::Result<(Option<LitStr>, TokenStream)> {
            let uri = if input.peek(LitStr) {
                let uri: LitStr = input.parse()?;
                if !input.is_empty() {
                    input.parse::<Token![,]>()?;
                }
                Some(uri)
            } else {
                None
            };
            Ok((uri, input.parse()?))
        };
        let (uri, rest) = split.parse2(args)?;
        let mut item = ItemAttrs::default();
        let mut primitive = PrimitiveAttrs::default();
        let mut mime_type = None;
        let mut size = None;
        let mut audience = None;
        let mut priority = None;
        entries(rest, &mut errors, |key, meta, _| {
            if item.parse_key(key, meta, "MyResource")? || primitive.parse_key(key, meta)? {
                return Ok(());
            }
            match key {
                keys::MIME_TYPE => {
                    let value = lit_str(meta)?;
                    check_mime_type(&value)?;
                    set(&mut mime_type, value, meta)
                }
                keys::SIZE => set(&mut size, parse_size(meta)?, meta),
                keys::AUDIENCE => {
                    let roles = str_list(meta)?
                        .iter()
                        .map(|s| choice_of(s, "audience", keys::AUDIENCES))
                        .collect::<syn::Result<Vec<_>>>()?;
                    set(&mut audience, roles, meta)
                }
                keys::PRIORITY => set(&mut priority, parse_priority(meta)?, meta),
                keys::URI => Err(meta.error(URI_FIRST)),
                other => Err(unknown(
                    meta,
                    "`#[resource]` key",
                    other,
                    keys::RESOURCE_KEYS,
                )),
            }
        });
        let Some(uri) = uri else {
            errors.push_at(
                Span::call_site(),
                format!("`#[resource]` needs the resource's URI or URI template: {URI_FIRST}"),
            );
            return Err(errors.finish().expect_err("an error was pushed"));
        };
        errors.finish()?;
        Ok(ResourceAttrs {
            uri,
            item,
            primitive,
            mime_type,
            size,
            audience,
            priority,
        })
    }
}

impl PromptAttrs {
    /// Parses the arguments of `#[prompt(..)]`.
    pub fn parse(args: TokenStream) -> syn::Result<PromptAttrs> {
        let mut errors = Errors::default();
        let mut attrs = PromptAttrs::default();
        entries(args, &mut errors, |key, meta, _| {
            if attrs.item.parse_key(key, meta, "MyPrompt")?
                || attrs.primitive.parse_key(key, meta)?
            {
                return Ok(());
            }
            Err(unknown(meta, "`#[prompt]` key", key, keys::PROMPT_KEYS))
        });
        errors.finish()?;
        Ok(attrs)
    }
}

/// A MIME type is `type/subtype` (parameters allowed after `;`).
fn check_mime_type(value: &LitStr) -> syn::Result<()> {
    let text = value.value();
    let essence = text.split(';').next().unwrap_or_default().trim();
    let token = |s: &str| {
        !s.is_empty()
            && s.chars()
                .all(|c| c.is_ascii_alphanumeric() || "!#$&-^_.+".contains(c))
    };
    match essence.split_once('/') {
        Some((kind, sub)) if token(kind) && token(sub) => Ok(()),
        _ => Err(syn::Error::new(
            value.span(),
            format!("`{text}` is not a MIME type: write `type/subtype`, e.g. `\"text/markdown\"` or `\"application/json\"`"),
        )),
    }
}

/// `size = 1024`: bytes, a non-negative integer.
fn parse_size(meta: &ParseNestedMeta<'_>) -> syn::Result<u64> {
    const FIX: &str = "`size` is the resource's size in bytes: `size = 1024`";
    let value = meta.value().map_err(|_| meta.error(FIX))?;
    let expr: Expr = value.parse()?;
    match &expr {
        Expr::Lit(syn::ExprLit {
            lit: syn::Lit::Int(n),
            ..
        }) => n
            .base10_parse::<u64>()
            .map_err(|_| syn::Error::new(n.span(), FIX)),
        other => Err(syn::Error::new(other.span(), FIX)),
    }
}

/// `priority = 0.8`: from 0 (least important) to 1 (required), as MCP
/// annotations say.
fn parse_priority(meta: &ParseNestedMeta<'_>) -> syn::Result<f64> {
    const FIX: &str =
        "`priority` is a number from 0.0 (least important) to 1.0 (effectively required): `priority = 0.8`";
    let value = meta.value().map_err(|_| meta.error(FIX))?;
    let expr: Expr = value.parse()?;
    let number = match &expr {
        Expr::Lit(syn::ExprLit {
            lit: syn::Lit::Float(f),
            ..
        }) => f.base10_parse::<f64>().ok(),
        Expr::Lit(syn::ExprLit {
            lit: syn::Lit::Int(n),
            ..
        }) => n.base10_parse::<u8>().ok().map(f64::from),
        _ => None,
    };
    match number {
        Some(p) if (0.0..=1.0).contains(&p) => Ok(p),
        _ => Err(syn::Error::new(expr.span(), FIX)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use quote::quote;

    #[test]
    fn resource_keys() {
        let attrs = ResourceAttrs::parse(quote!(
            "notes://{id}",
            name = "note",
            title = "A note",
            mime_type = "text/markdown; charset=utf-8",
            size = 1024,
            audience = ["user", "assistant"],
            priority = 0.5,
            complete(id = note_ids),
            icons = ["https://example.com/n.png"],
            timeout = "5s"
        ))
        .unwrap();
        assert_eq!(attrs.uri.value(), "notes://{id}");
        assert_eq!(attrs.size, Some(1024));
        assert_eq!(attrs.priority, Some(0.5));
        assert_eq!(attrs.audience.unwrap().len(), 2);
        assert_eq!(attrs.primitive.completers()[0].target.name(), "id");
        assert!(ResourceAttrs::parse(quote!("notes://recent")).is_ok());
    }

    fn error(result: syn::Result<impl Sized>) -> String {
        match result {
            Ok(_) => panic!("expected an error"),
            Err(e) => e
                .into_iter()
                .map(|e| e.to_string())
                .collect::<Vec<_>>()
                .join("\n"),
        }
    }

    #[test]
    fn resource_refusals() {
        assert!(
            error(ResourceAttrs::parse(quote!(name = "x"))).contains("needs the resource's URI")
        );
        assert!(error(ResourceAttrs::parse(quote!("a://b", uri = "x"))).contains("comes first"));
        assert_eq!(
            error(ResourceAttrs::parse(quote!(
                "a://b",
                mimetype = "text/plain"
            ))),
            "unknown `#[resource]` key `mimetype`: did you mean `mime_type`?"
        );
        assert!(error(ResourceAttrs::parse(quote!(
            "a://b",
            mime_type = "markdown"
        )))
        .contains("not a MIME type"));
        assert!(error(ResourceAttrs::parse(quote!("a://b", priority = 2.0))).contains("0.0"));
        assert!(error(ResourceAttrs::parse(quote!("a://b", size = -1))).contains("bytes"));
        assert!(
            error(ResourceAttrs::parse(quote!("a://b", audience = ["robot"])))
                .contains("unknown audience `robot`")
        );
        assert!(error(ResourceAttrs::parse(quote!(
            "a://b",
            complete(id = f, id = g)
        )))
        .contains("already has"));
        assert!(error(ResourceAttrs::parse(quote!("a://b", complete = f))).contains("takes a list"));
        assert!(
            error(ResourceAttrs::parse(quote!("a://b", icons = ["http://x"]))).contains("https://")
        );
    }

    #[test]
    fn prompt_keys() {
        let attrs = PromptAttrs::parse(quote!(
            name = "summarize",
            title = "S",
            complete(tag = tags)
        ))
        .unwrap();
        assert_eq!(attrs.item.name.unwrap().value(), "summarize");
        assert_eq!(
            error(PromptAttrs::parse(quote!(titel = "S"))),
            "unknown `#[prompt]` key `titel`: did you mean `title`?"
        );
    }
}
