//! Parsing the arguments of the five macros: the value shapes every macro
//! shares (string, list of strings, flag, one of a set, duration, path,
//! expression), the entry loop that collects every error and goes on after
//! one, "did you mean" for a misspelt key, the duplicate-key check, and the
//! keys every fn macro has ([`ItemAttrs`]). Each macro's own keys are in
//! [`tool`], [`primitive`] and [`set`](mod@set). Keys are matched by their
//! [`keys`] constants, and every match ends in an "unknown key"
//! error: no arm quietly takes a key it does not name.

pub mod primitive;
pub mod set;
pub mod tool;

use proc_macro2::{Span, TokenStream};
use syn::ext::IdentExt;
use syn::meta::ParseNestedMeta;
use syn::parse::{ParseStream, Parser};
use syn::punctuated::Punctuated;
use syn::{Expr, Ident, LitBool, LitStr, Path, PathSegment, Token};

use super::errors::Errors;
use super::keys;
use super::names::unknown_message;

/// A value picked from a fixed set (`approval = "read"`), with its span.
#[derive(Clone)]
pub struct Choice {
    pub value: &'static str,
    pub span: Span,
}

/// A boolean flag (`read_only` or `read_only = false`).
#[derive(Clone)]
pub struct Flag {
    pub name: &'static str,
    pub value: bool,
}

/// `timeout = "30s"`, parsed at compile time.
pub struct Timeout {
    pub limit: std::time::Duration,
}

/// The keys every fn macro (`#[tool]`, `#[resource]`, `#[prompt]`) has:
/// what the item is called, its type, its description, its time limit and
/// the runtime crate's path.
#[derive(Default)]
pub struct ItemAttrs {
    pub krate: Option<Path>,
    pub name: Option<LitStr>,
    pub type_name: Option<Ident>,
    pub description: Option<LitStr>,
    pub timeout: Option<Timeout>,
}

impl ItemAttrs {
    /// Parses `key` if it is one of these; `Ok(false)` when it is not.
    /// `type_example` is the generated type a `type_name` error shows.
    pub fn parse_key(
        &mut self,
        key: &str,
        meta: &ParseNestedMeta<'_>,
        type_example: &str,
    ) -> syn::Result<bool> {
        match key {
            keys::CRATE => set(&mut self.krate, crate_path(meta)?, meta)?,
            keys::NAME => set(&mut self.name, lit_str(meta)?, meta)?,
            keys::TYPE_NAME => {
                let ident: Ident = meta.value()?.parse().map_err(|e| {
                    syn::Error::new(
                        e.span(),
                        format!("`type_name` needs an identifier: `type_name = {type_example}`"),
                    )
                })?;
                set(&mut self.type_name, ident, meta)?
            }
            keys::DESCRIPTION => set(&mut self.description, lit_str(meta)?, meta)?,
            keys::TIMEOUT => set(&mut self.timeout, timeout(meta)?, meta)?,
            _ => return Ok(false),
        }
        Ok(true)
    }
}

/// How an attribute names an input field (`complete(..)`, `header(..)`):
/// by its Rust identifier, which the compiler checks and which stands for
/// the name serde gives the field (its `rename_all` form included), or by
/// the name a client sees, as a string — for a field renamed on its own
/// (`#[serde(rename = "topic")]`), whose Rust name no client knows.
pub enum FieldName {
    /// `note_id = ..`: the field, by its Rust name.
    Rust(Ident),
    /// `"topic" = ..`: the name clients see.
    Serde(LitStr),
}

impl FieldName {
    /// The name as written, without `r#` or quotes.
    pub fn name(&self) -> String {
        match self {
            FieldName::Rust(ident) => super::names::unraw(ident),
            FieldName::Serde(lit) => lit.value(),
        }
    }
}

impl std::fmt::Display for FieldName {
    /// As written: `r#type`, `"topic"`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            FieldName::Rust(ident) => ident.fmt(f),
            FieldName::Serde(lit) => lit.token().fmt(f),
        }
    }
}

impl quote::ToTokens for FieldName {
    fn to_tokens(&self, tokens: &mut TokenStream) {
        match self {
            FieldName::Rust(ident) => ident.to_tokens(tokens),
            FieldName::Serde(lit) => lit.to_tokens(tokens),
        }
    }
}

/// The key of one entry of a list whose keys name input fields: a path,
/// as `syn` parses nested meta, or a string ([`FieldName::Serde`]).
pub enum FieldKey {
    Path(Path),
    Serde(LitStr),
}

/// Parses `key(field = .., "name" = .., ..)` as `syn`'s
/// `parse_nested_meta` does, and also takes a string where a key goes;
/// `each` gets the key and the input after it (`= value` still to parse).
pub fn field_entries(
    meta: &ParseNestedMeta<'_>,
    mut each: impl FnMut(FieldKey, ParseStream<'_>) -> syn::Result<()>,
) -> syn::Result<()> {
    let content;
    syn::parenthesized!(content in meta.input);
    loop {
        let key = if content.peek(LitStr) {
            FieldKey::Serde(content.parse()?)
        } else {
            FieldKey::Path(content.call(parse_meta_path)?)
        };
        each(key, &content)?;
        if content.is_empty() {
            return Ok(());
        }
        content.parse::<Token![,]>()?;
        if content.is_empty() {
            return Ok(());
        }
    }
}

/// `= <value>` after a key, or the error `missing()` spanned on the key.
pub fn key_value<'a>(
    key: &dyn quote::ToTokens,
    input: ParseStream<'a>,
    missing: impl FnOnce() -> String,
) -> syn::Result<ParseStream<'a>> {
    match input.parse::<Token![=]>() {
        Ok(_) => Ok(input),
        Err(_) => Err(syn::Error::new_spanned(key, missing())),
    }
}

/// A nested-meta path as `syn` reads it (keywords allowed), with its
/// messages.
fn parse_meta_path(input: ParseStream<'_>) -> syn::Result<Path> {
    Ok(Path {
        leading_colon: input.parse()?,
        segments: {
            let mut segments = Punctuated::new();
            if input.peek(Ident::peek_any) {
                let ident = Ident::parse_any(input)?;
                segments.push_value(PathSegment::from(ident));
            } else if input.is_empty() {
                return Err(input.error("expected nested attribute"));
            } else if input.peek(syn::Lit) {
                return Err(input.error("unexpected literal in nested attribute, expected ident"));
            } else {
                return Err(input.error("unexpected token in nested attribute, expected ident"));
            }
            while input.peek(Token![::]) {
                let punct = input.parse()?;
                segments.push_punct(punct);
                let ident = Ident::parse_any(input)?;
                segments.push_value(PathSegment::from(ident));
            }
            segments
        },
    })
}

/// A string key that names nothing is refused: it could only be a slip.
pub fn serde_key(name: LitStr) -> syn::Result<FieldName> {
    if name.value().is_empty() {
        return Err(syn::Error::new(
            name.span(),
            "`\"\"` names no field: write the name clients see, e.g. `\"topic\"`",
        ));
    }
    Ok(FieldName::Serde(name))
}

/// Runs `each` over the `key = value` / `key(..)` entries of `input` with
/// the key's name, collecting every error and skipping a bad entry, so one
/// build shows every problem.
pub fn entries(
    input: TokenStream,
    errors: &mut Errors,
    mut each: impl FnMut(&str, &ParseNestedMeta<'_>, &mut Errors) -> syn::Result<()>,
) {
    let parser = syn::meta::parser(|meta| {
        if let Err(error) = each(&key_of(&meta), &meta, errors) {
            errors.push(error);
            skip_entry(meta.input);
        }
        Ok(())
    });
    if let Err(error) = parser.parse2(input) {
        errors.push(error);
    }
}

/// The key of an entry, without `r#`.
pub fn key_of(meta: &ParseNestedMeta<'_>) -> String {
    meta.path
        .get_ident()
        .map(super::names::unraw)
        .unwrap_or_else(|| {
            let path = &meta.path;
            quote::quote!(#path).to_string()
        })
}

/// The constant of `key` in `list`, if it is there.
pub fn known(key: &str, list: &[&'static str]) -> Option<&'static str> {
    list.iter().find(|k| **k == key).copied()
}

/// "unknown `what` `key`", with a suggestion from `list`.
pub fn unknown(meta: &ParseNestedMeta<'_>, what: &str, key: &str, list: &[&str]) -> syn::Error {
    meta.error(unknown_message(what, key, list))
}

/// Skips the rest of one `key = value` / `key(...)` entry after an error,
/// up to the next top-level comma.
pub fn skip_entry(input: ParseStream<'_>) {
    let _ = input.step(|cursor| {
        let mut rest = *cursor;
        while let Some((tt, next)) = rest.token_tree() {
            if let proc_macro2::TokenTree::Punct(p) = &tt {
                if p.as_char() == ',' {
                    return Ok(((), rest));
                }
            }
            rest = next;
        }
        Ok(((), rest))
    });
}

/// Fills `slot`, refusing a key given twice.
pub fn set<T>(slot: &mut Option<T>, value: T, meta: &ParseNestedMeta<'_>) -> syn::Result<()> {
    if slot.is_some() {
        return Err(meta.error(format!("duplicate `{}`: give each key once", key_of(meta))));
    }
    *slot = Some(value);
    Ok(())
}

/// Adds flag `name` (`name` or `name = false`), refusing a second one.
pub fn push_flag(
    flags: &mut Vec<Flag>,
    name: &'static str,
    meta: &ParseNestedMeta<'_>,
) -> syn::Result<()> {
    if flags.iter().any(|f| f.name == name) {
        return Err(meta.error(format!("duplicate `{name}`: give each key once")));
    }
    flags.push(Flag {
        name,
        value: flag(meta)?,
    });
    Ok(())
}

/// `key = "..."`.
pub fn lit_str(meta: &ParseNestedMeta<'_>) -> syn::Result<LitStr> {
    let key = key_of(meta);
    let value = meta
        .value()
        .map_err(|_| meta.error(format!("`{key}` needs a string value: `{key} = \"...\"`")))?;
    let expr: Expr = value.parse()?;
    match expr {
        Expr::Lit(syn::ExprLit {
            lit: syn::Lit::Str(s),
            ..
        }) => Ok(s),
        other => Err(syn::Error::new_spanned(
            other,
            format!("`{key}` needs a string literal: `{key} = \"...\"`"),
        )),
    }
}

/// `key = ["a", "b"]` (or one string).
pub fn str_list(meta: &ParseNestedMeta<'_>) -> syn::Result<Vec<LitStr>> {
    let key = key_of(meta);
    let value = meta.value().map_err(|_| {
        meta.error(format!(
            "`{key}` needs a list of strings: `{key} = [\"a\", \"b\"]`"
        ))
    })?;
    let expr: Expr = value.parse()?;
    let items: Vec<Expr> = match expr {
        Expr::Array(array) => array.elems.into_iter().collect(),
        lit @ Expr::Lit(_) => vec![lit],
        other => {
            return Err(syn::Error::new_spanned(
                other,
                format!("`{key}` needs a list of strings: `{key} = [\"a\", \"b\"]`"),
            ))
        }
    };
    items
        .into_iter()
        .map(|item| match item {
            Expr::Lit(syn::ExprLit {
                lit: syn::Lit::Str(s),
                ..
            }) => Ok(s),
            other => Err(syn::Error::new_spanned(
                other,
                format!("`{key}` needs string literals: `{key} = [\"a\", \"b\"]`"),
            )),
        })
        .collect()
}

/// `key = "one of options"`.
pub fn choice(
    meta: &ParseNestedMeta<'_>,
    what: &str,
    options: &[&'static str],
) -> syn::Result<Choice> {
    let key = key_of(meta);
    let value = meta.value().map_err(|_| {
        meta.error(format!(
            "`{key}` needs a value: `{key} = \"{}\"`",
            options[0]
        ))
    })?;
    let expr: Expr = value.parse()?;
    let Expr::Lit(syn::ExprLit {
        lit: syn::Lit::Str(s),
        ..
    }) = &expr
    else {
        return Err(syn::Error::new_spanned(
            &expr,
            format!(
                "`{key}` needs a string: one of {}",
                options
                    .iter()
                    .map(|o| format!("`\"{o}\"`"))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        ));
    };
    choice_of(s, what, options)
}

/// The constant of `s` in `options`, or "unknown `what`" with a suggestion.
pub fn choice_of(s: &LitStr, what: &str, options: &[&'static str]) -> syn::Result<Choice> {
    let text = s.value();
    match known(&text, options) {
        Some(value) => Ok(Choice {
            value,
            span: s.span(),
        }),
        None => Err(syn::Error::new(
            s.span(),
            unknown_message(what, &text, options),
        )),
    }
}

/// `key = "30s"`: a humantime duration (`"500ms"`, `"2m"`, `"1h 30m"`),
/// and the literal it came from.
pub fn duration(meta: &ParseNestedMeta<'_>) -> syn::Result<(std::time::Duration, LitStr)> {
    const FORMAT: &str =
        "a duration string such as `\"30s\"`, `\"500ms\"`, `\"2m\"` or `\"1h 30m\"`";
    let key = key_of(meta);
    let value = meta
        .value()
        .map_err(|_| meta.error(format!("`{key}` needs a value: {FORMAT}")))?;
    let expr: Expr = value.parse()?;
    let Expr::Lit(syn::ExprLit {
        lit: syn::Lit::Str(s),
        ..
    }) = &expr
    else {
        return Err(syn::Error::new_spanned(
            &expr,
            format!("`{key}` needs {FORMAT}"),
        ));
    };
    let duration = humantime::parse_duration(&s.value()).map_err(|e| {
        syn::Error::new(
            s.span(),
            format!("`{key}` is not a duration ({e}): write {FORMAT}"),
        )
    })?;
    Ok((duration, s.clone()))
}

/// `timeout = "30s"`: a [`duration`] longer than zero.
pub fn timeout(meta: &ParseNestedMeta<'_>) -> syn::Result<Timeout> {
    let (limit, s) = duration(meta)?;
    if limit.is_zero() {
        return Err(syn::Error::new(
            s.span(),
            "`timeout` must be longer than zero (no call could finish); leave `timeout` out for no limit",
        ));
    }
    Ok(Timeout { limit })
}

/// `key` or `key = false`.
pub fn flag(meta: &ParseNestedMeta<'_>) -> syn::Result<bool> {
    if meta.input.peek(Token![=]) {
        let value: LitBool = meta.value()?.parse().map_err(|e| {
            syn::Error::new(
                e.span(),
                format!("`{}` is a flag: write `{0}` or `{0} = false`", key_of(meta)),
            )
        })?;
        Ok(value.value)
    } else {
        Ok(true)
    }
}

/// `key = <expression>`; `example` shows one in the error.
pub fn expr(meta: &ParseNestedMeta<'_>, example: &str) -> syn::Result<Expr> {
    let key = key_of(meta);
    let value = meta
        .value()
        .map_err(|_| meta.error(format!("`{key}` needs a value: `{key} = {example}`")))?;
    value.parse()
}

/// `crate = path` or `crate = "path"`.
pub fn crate_path(meta: &ParseNestedMeta<'_>) -> syn::Result<Path> {
    let value = meta.value()?;
    if value.peek(LitStr) {
        value.parse::<LitStr>()?.parse::<Path>()
    } else {
        Path::parse_mod_style(value)
    }
}

/// Parses a nested list `key(a = .., b, ..)`, handing each entry to
/// `each` (whose last arm reports an unknown key); an entry that fails is
/// reported and skipped, and parsing goes on.
pub fn nested(
    meta: &ParseNestedMeta<'_>,
    keys: &[&str],
    errors: &mut Errors,
    mut each: impl FnMut(&str, &ParseNestedMeta<'_>) -> syn::Result<()>,
) -> syn::Result<()> {
    let outer = key_of(meta);
    if !meta.input.peek(syn::token::Paren) {
        return Err(meta.error(format!(
            "`{outer}` takes a list: `{outer}({} = ...)`",
            keys[0]
        )));
    }
    meta.parse_nested_meta(|inner| {
        let key = key_of(&inner);
        if let Err(error) = each(&key, &inner) {
            errors.push(error);
            skip_entry(inner.input);
        }
        Ok(())
    })
}
