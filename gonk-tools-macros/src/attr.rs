//! Parsing `#[tool(...)]` arguments into [`ToolAttrs`]: every key, its
//! value checked for shape (string, list, flag, one of a set), every
//! misuse an error spanned on the offending token. Errors are collected,
//! not returned at the first one, so one build shows all of them. Keys are
//! matched by their [`keys`](crate::keys) constants, and every match ends
//! in an "unknown key" error: no arm quietly takes a key it does not name.

use proc_macro2::{Span, TokenStream};
use syn::meta::ParseNestedMeta;
use syn::parse::{ParseStream, Parser};
use syn::spanned::Spanned;
use syn::{Expr, Ident, LitBool, LitStr, Path, Token};

use crate::errors::Errors;
use crate::keys;
use crate::names::unknown_message;

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

/// The `approval` attribute.
pub enum Approval {
    /// `approval = "read"`
    Tier(Choice),
    /// `approval(tier = "write", override, reason = "...")`
    Spec {
        tier: Choice,
        overridable: bool,
        reason: Option<LitStr>,
    },
    /// `approval = path::to_fn` (a fn of `&Input`).
    Fn(Expr),
}

#[derive(Default)]
pub struct Cli {
    pub command: Option<LitStr>,
    pub positional: Option<Vec<LitStr>>,
    pub aliases: Option<Vec<LitStr>>,
    pub examples: Option<Vec<LitStr>>,
}

#[derive(Default)]
pub struct Mcp {
    pub name: Option<LitStr>,
    pub visibility: Option<Choice>,
    pub annotations: Vec<Flag>,
    pub headers: Option<Vec<McpHeader>>,
}

/// One entry of `mcp(header(region = "Region"))`: an input field whose
/// argument a client also sends as the header `Mcp-Param-Region`. The
/// name is checked here; the field (it exists, it is a scalar) by the
/// compiler, through the code [`expand`](crate::expand) writes.
pub struct McpHeader {
    pub field: Ident,
    pub name: LitStr,
}

#[derive(Default)]
pub struct Pi {
    pub name: Option<LitStr>,
    pub visibility: Option<Choice>,
    pub requires_approval: Option<bool>,
    pub status_glyph: Option<LitStr>,
}

#[derive(Default)]
pub struct Authorization {
    pub auth_level: Option<LitStr>,
    pub required_role: Option<LitStr>,
    pub allowed_callers: Option<Vec<LitStr>>,
}

pub struct AuthorizationResource {
    pub kind: LitStr,
    pub required_fields: Option<Vec<LitStr>>,
}

/// Everything `#[tool(...)]` can say.
#[derive(Default)]
pub struct ToolAttrs {
    pub krate: Option<Path>,
    pub name: Option<LitStr>,
    pub type_name: Option<Ident>,
    pub description: Option<LitStr>,
    pub category: Option<LitStr>,
    pub visibility: Option<Choice>,
    pub approval: Option<Approval>,
    pub capabilities: Option<Vec<Flag>>,
    pub tags: Option<Vec<LitStr>>,
    pub keywords: Option<Vec<LitStr>>,
    pub related_to: Option<Vec<LitStr>>,
    pub cost: Option<Choice>,
    pub latency: Option<Choice>,
    pub cli: Option<Cli>,
    pub mcp: Option<Mcp>,
    pub pi: Option<Pi>,
    pub authorization: Option<Authorization>,
    pub authorization_resource: Option<AuthorizationResource>,
    pub validate_output: Option<Choice>,
    pub requires: Option<Expr>,
    pub capability_for: Option<Expr>,
    pub degraded_description: Option<LitStr>,
    pub input_json_schema: Option<Expr>,
    pub output_schema: Option<LitBool>,
    pub timeout: Option<Timeout>,
    pub cache_ttl: Option<std::time::Duration>,
    pub detached: Option<bool>,
}

/// `timeout = "30s"`, parsed at compile time.
pub struct Timeout {
    pub limit: std::time::Duration,
}

pub(crate) fn key_of(meta: &ParseNestedMeta<'_>) -> String {
    meta.path
        .get_ident()
        .map(crate::names::unraw)
        .unwrap_or_else(|| {
            let path = &meta.path;
            quote::quote!(#path).to_string()
        })
}

/// The constant of `key` in `list`, if it is there.
pub(crate) fn known(key: &str, list: &[&'static str]) -> Option<&'static str> {
    list.iter().find(|k| **k == key).copied()
}

/// "unknown `what` `key`", with a suggestion from `list`.
pub(crate) fn unknown(
    meta: &ParseNestedMeta<'_>,
    what: &str,
    key: &str,
    list: &[&str],
) -> syn::Error {
    meta.error(unknown_message(what, key, list))
}

/// Skips the rest of one `key = value` / `key(...)` entry after an error,
/// up to the next top-level comma.
pub(crate) fn skip_entry(input: ParseStream<'_>) {
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

pub(crate) fn set<T>(
    slot: &mut Option<T>,
    value: T,
    meta: &ParseNestedMeta<'_>,
) -> syn::Result<()> {
    if slot.is_some() {
        return Err(meta.error(format!("duplicate `{}`: give each key once", key_of(meta))));
    }
    *slot = Some(value);
    Ok(())
}

/// Adds flag `name` (`name` or `name = false`), refusing a second one.
fn push_flag(
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

pub(crate) fn lit_str(meta: &ParseNestedMeta<'_>) -> syn::Result<LitStr> {
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

pub(crate) fn str_list(meta: &ParseNestedMeta<'_>) -> syn::Result<Vec<LitStr>> {
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

fn choice(meta: &ParseNestedMeta<'_>, what: &str, options: &[&'static str]) -> syn::Result<Choice> {
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
fn duration(meta: &ParseNestedMeta<'_>) -> syn::Result<(std::time::Duration, LitStr)> {
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
pub(crate) fn timeout(meta: &ParseNestedMeta<'_>) -> syn::Result<Timeout> {
    let (limit, s) = duration(meta)?;
    if limit.is_zero() {
        return Err(syn::Error::new(
            s.span(),
            "`timeout` must be longer than zero (no call could finish); leave `timeout` out for no limit",
        ));
    }
    Ok(Timeout { limit })
}

fn flag(meta: &ParseNestedMeta<'_>) -> syn::Result<bool> {
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

pub(crate) fn expr(meta: &ParseNestedMeta<'_>, example: &str) -> syn::Result<Expr> {
    let key = key_of(meta);
    let value = meta
        .value()
        .map_err(|_| meta.error(format!("`{key}` needs a value: `{key} = {example}`")))?;
    value.parse()
}

pub(crate) fn crate_path(meta: &ParseNestedMeta<'_>) -> syn::Result<Path> {
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
fn nested(
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

impl ToolAttrs {
    /// Parses the arguments of `#[tool(...)]`.
    pub fn parse(args: TokenStream) -> syn::Result<ToolAttrs> {
        let mut attrs = ToolAttrs::default();
        let mut errors = Errors::default();
        let parser = syn::meta::parser(|meta| {
            if let Err(error) = attrs.parse_key(&meta, &mut errors) {
                errors.push(error);
                skip_entry(meta.input);
            }
            Ok(())
        });
        if let Err(error) = parser.parse2(args) {
            errors.push(error);
        }
        errors.finish()?;
        Ok(attrs)
    }

    fn parse_key(&mut self, meta: &ParseNestedMeta<'_>, errors: &mut Errors) -> syn::Result<()> {
        let key = key_of(meta);
        match key.as_str() {
            keys::CRATE => set(&mut self.krate, crate_path(meta)?, meta),
            keys::NAME => set(&mut self.name, lit_str(meta)?, meta),
            keys::TYPE_NAME => {
                let ident: Ident = meta.value()?.parse().map_err(|e| {
                    syn::Error::new(
                        e.span(),
                        "`type_name` needs an identifier: `type_name = MyTool`",
                    )
                })?;
                set(&mut self.type_name, ident, meta)
            }
            keys::DESCRIPTION => set(&mut self.description, lit_str(meta)?, meta),
            keys::CATEGORY => set(&mut self.category, lit_str(meta)?, meta),
            keys::VISIBILITY => set(
                &mut self.visibility,
                choice(meta, "visibility", keys::VISIBILITIES)?,
                meta,
            ),
            keys::APPROVAL => {
                let approval = parse_approval(meta, errors)?;
                set(&mut self.approval, approval, meta)
            }
            keys::CAPABILITIES => {
                let capabilities = parse_capabilities(meta, errors)?;
                set(&mut self.capabilities, capabilities, meta)
            }
            keys::TAGS => set(&mut self.tags, str_list(meta)?, meta),
            keys::KEYWORDS => set(&mut self.keywords, str_list(meta)?, meta),
            keys::RELATED_TO => set(&mut self.related_to, str_list(meta)?, meta),
            keys::COST => set(&mut self.cost, choice(meta, "cost", keys::COSTS)?, meta),
            keys::LATENCY => set(
                &mut self.latency,
                choice(meta, "latency", keys::LATENCIES)?,
                meta,
            ),
            keys::VALIDATE_OUTPUT => set(
                &mut self.validate_output,
                choice(meta, "validate_output mode", keys::VALIDATE_OUTPUT_MODES)?,
                meta,
            ),
            keys::CLI => {
                let cli = parse_cli(meta, errors)?;
                set(&mut self.cli, cli, meta)
            }
            keys::MCP => {
                let mcp = parse_mcp(meta, errors)?;
                set(&mut self.mcp, mcp, meta)
            }
            keys::PI => {
                let pi = parse_pi(meta, errors)?;
                set(&mut self.pi, pi, meta)
            }
            keys::AUTHORIZATION => {
                let auth = parse_authorization(meta, errors)?;
                set(&mut self.authorization, auth, meta)
            }
            keys::AUTHORIZATION_RESOURCE => {
                let resource = parse_authorization_resource(meta, errors)?;
                set(&mut self.authorization_resource, resource, meta)
            }
            keys::REQUIRES => set(&mut self.requires, expr(meta, "path::to_fn")?, meta),
            keys::CAPABILITY_FOR => set(&mut self.capability_for, expr(meta, "path::to_fn")?, meta),
            keys::DEGRADED_DESCRIPTION => set(&mut self.degraded_description, lit_str(meta)?, meta),
            keys::INPUT_JSON_SCHEMA => set(
                &mut self.input_json_schema,
                expr(meta, "json!({..})")?,
                meta,
            ),
            keys::OUTPUT_SCHEMA => {
                let value: LitBool = meta.value()?.parse().map_err(|e| {
                    syn::Error::new(
                        e.span(),
                        "`output_schema` takes `false` (the default derives it from the output type)",
                    )
                })?;
                set(&mut self.output_schema, value, meta)
            }
            keys::TIMEOUT => set(&mut self.timeout, timeout(meta)?, meta),
            // Zero is allowed: it asks clients not to keep a listing with
            // this tool, below a registry default.
            keys::CACHE_TTL => set(&mut self.cache_ttl, duration(meta)?.0, meta),
            keys::DETACHED => set(&mut self.detached, flag(meta)?, meta),
            other => Err(unknown(meta, "`#[tool]` key", other, keys::TOOL_KEYS)),
        }
    }
}

/// `approval = "read"`, `approval(tier = "write", override, reason = "..")`
/// or `approval = path::to_fn`.
fn parse_approval(meta: &ParseNestedMeta<'_>, errors: &mut Errors) -> syn::Result<Approval> {
    if meta.input.peek(syn::token::Paren) {
        let mut tier = None;
        let mut overridable = None;
        let mut reason = None;
        nested(meta, keys::APPROVAL_KEYS, errors, |key, inner| match key {
            keys::TIER => set(
                &mut tier,
                choice(inner, "approval tier", keys::TIERS)?,
                inner,
            ),
            keys::OVERRIDE => set(&mut overridable, flag(inner)?, inner),
            keys::REASON => set(&mut reason, lit_str(inner)?, inner),
            other => Err(unknown(
                inner,
                "`approval(..)` key",
                other,
                keys::APPROVAL_KEYS,
            )),
        })?;
        let Some(tier) = tier else {
            return Err(meta.error(
                "`approval(..)` needs a tier: `approval(tier = \"write\", override, reason = \"...\")`",
            ));
        };
        return Ok(Approval::Spec {
            tier,
            overridable: overridable.unwrap_or(false),
            reason,
        });
    }
    let value = meta.value().map_err(|_| {
        meta.error("`approval` needs a value: `approval = \"read\"`, `approval(tier = \"write\", override)` or `approval = path::to_fn`")
    })?;
    let expr: Expr = value.parse()?;
    match &expr {
        Expr::Lit(syn::ExprLit {
            lit: syn::Lit::Str(s),
            ..
        }) => Ok(Approval::Tier(choice_of(s, "approval tier", keys::TIERS)?)),
        Expr::Lit(other) => Err(syn::Error::new(
            other.span(),
            "`approval` needs a tier string (`\"read\"`, `\"write\"`, `\"exec\"`) or a path to a fn of the input",
        )),
        _ => Ok(Approval::Fn(expr)),
    }
}

/// `capabilities(reads_fs, writes_fs = false, ..)`.
fn parse_capabilities(meta: &ParseNestedMeta<'_>, errors: &mut Errors) -> syn::Result<Vec<Flag>> {
    let mut flags = Vec::new();
    nested(
        meta,
        keys::CAPABILITY_FLAGS,
        errors,
        |key, inner| match known(key, keys::CAPABILITY_FLAGS) {
            Some(name) => push_flag(&mut flags, name, inner),
            None => Err(unknown(inner, "capability", key, keys::CAPABILITY_FLAGS)),
        },
    )?;
    Ok(flags)
}

/// `cli(command = "..", positional = [..], aliases = [..], examples = [..])`.
fn parse_cli(meta: &ParseNestedMeta<'_>, errors: &mut Errors) -> syn::Result<Cli> {
    let mut cli = Cli::default();
    nested(meta, keys::CLI_KEYS, errors, |key, inner| match key {
        keys::COMMAND => set(&mut cli.command, lit_str(inner)?, inner),
        keys::POSITIONAL => set(&mut cli.positional, str_list(inner)?, inner),
        keys::ALIASES => set(&mut cli.aliases, str_list(inner)?, inner),
        keys::EXAMPLES => set(&mut cli.examples, str_list(inner)?, inner),
        other => Err(unknown(inner, "`cli(..)` key", other, keys::CLI_KEYS)),
    })?;
    Ok(cli)
}

/// `mcp(name = "..", visibility = "..", header(..), read_only, destructive, ..)`.
fn parse_mcp(meta: &ParseNestedMeta<'_>, errors: &mut Errors) -> syn::Result<Mcp> {
    let mut mcp = Mcp::default();
    nested(meta, keys::MCP_KEYS, errors, |key, inner| match key {
        keys::NAME => set(&mut mcp.name, lit_str(inner)?, inner),
        keys::VISIBILITY => set(
            &mut mcp.visibility,
            choice(inner, "visibility", keys::VISIBILITIES)?,
            inner,
        ),
        keys::HEADER => {
            let headers = parse_headers(inner)?;
            set(&mut mcp.headers, headers, inner)
        }
        other => match known(other, keys::MCP_FLAGS) {
            Some(name) => push_flag(&mut mcp.annotations, name, inner),
            None => Err(unknown(inner, "`mcp(..)` key", other, keys::MCP_KEYS)),
        },
    })?;
    Ok(mcp)
}

/// `header(region = "Region", tenant_id = "Tenant")`: input fields, each
/// with the header name it is sent as (`Mcp-Param-Region`). Every bad
/// entry is reported (parsing goes on after one).
fn parse_headers(meta: &ParseNestedMeta<'_>) -> syn::Result<Vec<McpHeader>> {
    const EXAMPLE: &str =
        "`header(region = \"Region\")` (the input field `region`, sent as `Mcp-Param-Region`)";
    if !meta.input.peek(syn::token::Paren) {
        return Err(meta.error(format!(
            "`header` takes input fields and their header names: {EXAMPLE}"
        )));
    }
    let mut headers = Vec::new();
    let mut errors = Errors::default();
    meta.parse_nested_meta(|entry| {
        match header_entry(&entry, EXAMPLE) {
            Ok(header) => headers.push(header),
            Err(error) => {
                errors.push(error);
                skip_entry(entry.input);
            }
        }
        Ok(())
    })?;
    errors.finish()?;
    if headers.is_empty() {
        return Err(meta.error(format!("`header()` names no field: write {EXAMPLE}")));
    }
    Ok(headers)
}

/// One `field = "Name"` of `header(..)`.
fn header_entry(entry: &ParseNestedMeta<'_>, example: &str) -> syn::Result<McpHeader> {
    let field = match entry.path.get_ident() {
        // A keyword (`type`) parses here, but `input.type` would not:
        // it must be written raw.
        Some(ident) if syn::parse_str::<Ident>(&ident.to_string()).is_err() => {
            return Err(syn::Error::new(
                ident.span(),
                format!("`{ident}` is a keyword: write the field as `r#{ident}`"),
            ));
        }
        Some(ident) => ident.clone(),
        None => {
            return Err(syn::Error::new_spanned(
                &entry.path,
                format!("`header(..)` names fields of the input by their identifiers: {example}"),
            ))
        }
    };
    let value = entry.value().map_err(|_| {
        entry.error(format!(
            "`{field}` needs the header name it is sent as: `{field} = \"Name\"` (sent as `Mcp-Param-Name`)"
        ))
    })?;
    let expr: Expr = value.parse()?;
    let Expr::Lit(syn::ExprLit {
        lit: syn::Lit::Str(name),
        ..
    }) = expr
    else {
        return Err(syn::Error::new_spanned(
            expr,
            format!("`{field}` needs the header name as a string: `{field} = \"Name\"`"),
        ));
    };
    crate::rules::check_header_name(&name.value())
        .map_err(|e| syn::Error::new(name.span(), e.describe(&name.value())))?;
    Ok(McpHeader { field, name })
}

/// `pi(name = "..", visibility = "..", requires_approval, status_glyph = "..")`.
fn parse_pi(meta: &ParseNestedMeta<'_>, errors: &mut Errors) -> syn::Result<Pi> {
    let mut pi = Pi::default();
    nested(meta, keys::PI_KEYS, errors, |key, inner| match key {
        keys::NAME => set(&mut pi.name, lit_str(inner)?, inner),
        keys::VISIBILITY => set(
            &mut pi.visibility,
            choice(inner, "visibility", keys::VISIBILITIES)?,
            inner,
        ),
        keys::REQUIRES_APPROVAL => set(&mut pi.requires_approval, flag(inner)?, inner),
        keys::STATUS_GLYPH => set(&mut pi.status_glyph, lit_str(inner)?, inner),
        other => Err(unknown(inner, "`pi(..)` key", other, keys::PI_KEYS)),
    })?;
    Ok(pi)
}

/// `authorization(auth_level = "..", required_role = "..", allowed_callers = [..])`.
fn parse_authorization(
    meta: &ParseNestedMeta<'_>,
    errors: &mut Errors,
) -> syn::Result<Authorization> {
    let mut auth = Authorization::default();
    nested(meta, keys::AUTH_KEYS, errors, |key, inner| match key {
        keys::AUTH_LEVEL => set(&mut auth.auth_level, lit_str(inner)?, inner),
        keys::REQUIRED_ROLE => set(&mut auth.required_role, lit_str(inner)?, inner),
        keys::ALLOWED_CALLERS => set(&mut auth.allowed_callers, str_list(inner)?, inner),
        other => Err(unknown(
            inner,
            "`authorization(..)` key",
            other,
            keys::AUTH_KEYS,
        )),
    })?;
    Ok(auth)
}

/// `authorization_resource = "note"` or
/// `authorization_resource(kind = "note", required_fields = [..])`.
fn parse_authorization_resource(
    meta: &ParseNestedMeta<'_>,
    errors: &mut Errors,
) -> syn::Result<AuthorizationResource> {
    if meta.input.peek(Token![=]) {
        return Ok(AuthorizationResource {
            kind: lit_str(meta)?,
            required_fields: None,
        });
    }
    let mut kind = None;
    let mut required_fields = None;
    nested(
        meta,
        keys::AUTH_RESOURCE_KEYS,
        errors,
        |key, inner| match key {
            keys::KIND => set(&mut kind, lit_str(inner)?, inner),
            keys::REQUIRED_FIELDS => set(&mut required_fields, str_list(inner)?, inner),
            other => Err(unknown(
                inner,
                "`authorization_resource(..)` key",
                other,
                keys::AUTH_RESOURCE_KEYS,
            )),
        },
    )?;
    let Some(kind) = kind else {
        return Err(meta.error(
            "`authorization_resource` needs a kind: `authorization_resource(kind = \"note\")`",
        ));
    };
    Ok(AuthorizationResource {
        kind,
        required_fields,
    })
}

/// Options of a tool set: `#[tools(client = Name, crate = path)]` and
/// `#[toolset(..)]` in `toolset!`.
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
