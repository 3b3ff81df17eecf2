//! Parsing `#[tool(...)]` arguments into [`ToolAttrs`]: every key, its
//! value checked for shape (string, list, flag, one of a set), every
//! misuse an error spanned on the offending token. Errors are collected,
//! not returned at the first one, so one build shows all of them.

use proc_macro2::{Span, TokenStream};
use syn::meta::ParseNestedMeta;
use syn::parse::{ParseStream, Parser};
use syn::spanned::Spanned;
use syn::{Expr, Ident, LitBool, LitStr, Path, Token};

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
}

pub const TOOL_KEYS: &[&str] = &[
    "name",
    "description",
    "category",
    "visibility",
    "approval",
    "capabilities",
    "tags",
    "keywords",
    "related_to",
    "cost",
    "latency",
    "cli",
    "mcp",
    "pi",
    "authorization",
    "authorization_resource",
    "validate_output",
    "requires",
    "capability_for",
    "degraded_description",
    "input_json_schema",
    "output_schema",
    "type_name",
    "crate",
];

pub const TIERS: &[&str] = &["read", "write", "exec"];
pub const VISIBILITIES: &[&str] = &["always", "on-demand"];
pub const COSTS: &[&str] = &["low", "moderate", "high"];
pub const LATENCIES: &[&str] = &["instant", "seconds", "minutes"];
pub const VALIDATE_OUTPUT: &[&str] = &["off", "lax", "strict"];
pub const CAPABILITIES: &[&str] = &[
    "reads_fs",
    "writes_fs",
    "network",
    "long_running",
    "idempotent",
    "duplex",
];
pub const MCP_KEYS: &[&str] = &[
    "name",
    "visibility",
    "read_only",
    "destructive",
    "idempotent",
    "open_world",
];
const MCP_FLAGS: &[&str] = &["read_only", "destructive", "idempotent", "open_world"];
pub const CLI_KEYS: &[&str] = &["command", "positional", "aliases", "examples"];
pub const PI_KEYS: &[&str] = &["name", "visibility", "requires_approval", "status_glyph"];
pub const AUTH_KEYS: &[&str] = &["auth_level", "required_role", "allowed_callers"];
pub const AUTH_RESOURCE_KEYS: &[&str] = &["kind", "required_fields"];
pub const APPROVAL_KEYS: &[&str] = &["tier", "override", "reason"];

/// Collects errors.
#[derive(Default)]
pub struct Errors(Option<syn::Error>);

impl Errors {
    pub fn push(&mut self, error: syn::Error) {
        match &mut self.0 {
            Some(all) => all.combine(error),
            None => self.0 = Some(error),
        }
    }

    pub fn push_spanned(&mut self, tokens: impl quote::ToTokens, message: impl std::fmt::Display) {
        self.push(syn::Error::new_spanned(tokens, message));
    }

    pub fn push_at(&mut self, span: Span, message: impl std::fmt::Display) {
        self.push(syn::Error::new(span, message));
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_none()
    }

    pub fn finish(self) -> syn::Result<()> {
        match self.0 {
            Some(error) => Err(error),
            None => Ok(()),
        }
    }
}

fn key_of(meta: &ParseNestedMeta<'_>) -> String {
    meta.path
        .get_ident()
        .map(crate::names::unraw)
        .unwrap_or_else(|| {
            let path = &meta.path;
            quote::quote!(#path).to_string()
        })
}

/// Skips the rest of one `key = value` / `key(...)` entry after an error,
/// up to the next top-level comma.
fn skip_entry(input: ParseStream<'_>) {
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

fn set<T>(slot: &mut Option<T>, value: T, meta: &ParseNestedMeta<'_>) -> syn::Result<()> {
    if slot.is_some() {
        return Err(meta.error(format!("duplicate `{}`: give each key once", key_of(meta))));
    }
    *slot = Some(value);
    Ok(())
}

fn lit_str(meta: &ParseNestedMeta<'_>) -> syn::Result<LitStr> {
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

fn str_list(meta: &ParseNestedMeta<'_>) -> syn::Result<Vec<LitStr>> {
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
    match options.iter().find(|o| **o == text) {
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

fn expr(meta: &ParseNestedMeta<'_>, example: &str) -> syn::Result<Expr> {
    let key = key_of(meta);
    let value = meta
        .value()
        .map_err(|_| meta.error(format!("`{key}` needs a value: `{key} = {example}`")))?;
    value.parse()
}

/// Parses a nested list `key(a = .., b, ..)`; unknown keys are reported
/// with a suggestion and skipped.
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
        let result = if keys.contains(&key.as_str()) {
            each(&key, &inner)
        } else {
            Err(inner.error(unknown_message(&format!("`{outer}(..)` key"), &key, keys)))
        };
        if let Err(error) = result {
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
            "crate" => {
                let value = meta.value()?;
                let path = if value.peek(LitStr) {
                    let s: LitStr = value.parse()?;
                    s.parse::<Path>()?
                } else {
                    Path::parse_mod_style(value)?
                };
                set(&mut self.krate, path, meta)
            }
            "name" => set(&mut self.name, lit_str(meta)?, meta),
            "type_name" => {
                let ident: Ident = meta.value()?.parse().map_err(|e| {
                    syn::Error::new(
                        e.span(),
                        "`type_name` needs an identifier: `type_name = MyTool`",
                    )
                })?;
                set(&mut self.type_name, ident, meta)
            }
            "description" => set(&mut self.description, lit_str(meta)?, meta),
            "category" => set(&mut self.category, lit_str(meta)?, meta),
            "visibility" => set(
                &mut self.visibility,
                choice(meta, "visibility", VISIBILITIES)?,
                meta,
            ),
            "approval" => {
                let approval = self.parse_approval(meta, errors)?;
                set(&mut self.approval, approval, meta)
            }
            "capabilities" => {
                let mut flags = Vec::new();
                nested(meta, CAPABILITIES, errors, |key, inner| {
                    let name = CAPABILITIES
                        .iter()
                        .find(|c| **c == key)
                        .copied()
                        .unwrap_or("");
                    flags.push(Flag {
                        name,
                        value: flag(inner)?,
                    });
                    Ok(())
                })?;
                set(&mut self.capabilities, flags, meta)
            }
            "tags" => set(&mut self.tags, str_list(meta)?, meta),
            "keywords" => set(&mut self.keywords, str_list(meta)?, meta),
            "related_to" => set(&mut self.related_to, str_list(meta)?, meta),
            "cost" => set(&mut self.cost, choice(meta, "cost", COSTS)?, meta),
            "latency" => set(&mut self.latency, choice(meta, "latency", LATENCIES)?, meta),
            "validate_output" => set(
                &mut self.validate_output,
                choice(meta, "validate_output mode", VALIDATE_OUTPUT)?,
                meta,
            ),
            "cli" => {
                let mut cli = Cli::default();
                nested(meta, CLI_KEYS, errors, |key, inner| match key {
                    "command" => set(&mut cli.command, lit_str(inner)?, inner),
                    "positional" => set(&mut cli.positional, str_list(inner)?, inner),
                    "aliases" => set(&mut cli.aliases, str_list(inner)?, inner),
                    _ => set(&mut cli.examples, str_list(inner)?, inner),
                })?;
                set(&mut self.cli, cli, meta)
            }
            "mcp" => {
                let mut mcp = Mcp::default();
                nested(meta, MCP_KEYS, errors, |key, inner| match key {
                    "name" => set(&mut mcp.name, lit_str(inner)?, inner),
                    "visibility" => set(
                        &mut mcp.visibility,
                        choice(inner, "visibility", VISIBILITIES)?,
                        inner,
                    ),
                    _ => {
                        let name = MCP_FLAGS.iter().find(|f| **f == key).copied().unwrap_or("");
                        if mcp.annotations.iter().any(|f| f.name == name) {
                            return Err(
                                inner.error(format!("duplicate `{key}`: give each key once"))
                            );
                        }
                        mcp.annotations.push(Flag {
                            name,
                            value: flag(inner)?,
                        });
                        Ok(())
                    }
                })?;
                set(&mut self.mcp, mcp, meta)
            }
            "pi" => {
                let mut pi = Pi::default();
                nested(meta, PI_KEYS, errors, |key, inner| match key {
                    "name" => set(&mut pi.name, lit_str(inner)?, inner),
                    "visibility" => set(
                        &mut pi.visibility,
                        choice(inner, "visibility", VISIBILITIES)?,
                        inner,
                    ),
                    "requires_approval" => set(&mut pi.requires_approval, flag(inner)?, inner),
                    _ => set(&mut pi.status_glyph, lit_str(inner)?, inner),
                })?;
                set(&mut self.pi, pi, meta)
            }
            "authorization" => {
                let mut auth = Authorization::default();
                nested(meta, AUTH_KEYS, errors, |key, inner| match key {
                    "auth_level" => set(&mut auth.auth_level, lit_str(inner)?, inner),
                    "required_role" => set(&mut auth.required_role, lit_str(inner)?, inner),
                    _ => set(&mut auth.allowed_callers, str_list(inner)?, inner),
                })?;
                set(&mut self.authorization, auth, meta)
            }
            "authorization_resource" => {
                let resource = if meta.input.peek(Token![=]) {
                    AuthorizationResource {
                        kind: lit_str(meta)?,
                        required_fields: None,
                    }
                } else {
                    let mut kind = None;
                    let mut required_fields = None;
                    nested(meta, AUTH_RESOURCE_KEYS, errors, |key, inner| match key {
                        "kind" => set(&mut kind, lit_str(inner)?, inner),
                        _ => set(&mut required_fields, str_list(inner)?, inner),
                    })?;
                    let Some(kind) = kind else {
                        return Err(meta.error(
                            "`authorization_resource` needs a kind: `authorization_resource(kind = \"note\")`",
                        ));
                    };
                    AuthorizationResource {
                        kind,
                        required_fields,
                    }
                };
                set(&mut self.authorization_resource, resource, meta)
            }
            "requires" => set(&mut self.requires, expr(meta, "path::to_fn")?, meta),
            "capability_for" => set(&mut self.capability_for, expr(meta, "path::to_fn")?, meta),
            "degraded_description" => set(&mut self.degraded_description, lit_str(meta)?, meta),
            "input_json_schema" => set(
                &mut self.input_json_schema,
                expr(meta, "json!({..})")?,
                meta,
            ),
            "output_schema" => {
                let value: LitBool = meta.value()?.parse().map_err(|e| {
                    syn::Error::new(
                        e.span(),
                        "`output_schema` takes `false` (the default derives it from the output type)",
                    )
                })?;
                set(&mut self.output_schema, value, meta)
            }
            other => Err(meta.error(unknown_message("`#[tool]` key", other, TOOL_KEYS))),
        }
    }

    fn parse_approval(
        &mut self,
        meta: &ParseNestedMeta<'_>,
        errors: &mut Errors,
    ) -> syn::Result<Approval> {
        if meta.input.peek(syn::token::Paren) {
            let mut tier = None;
            let mut overridable = None;
            let mut reason = None;
            nested(meta, APPROVAL_KEYS, errors, |key, inner| match key {
                "tier" => set(&mut tier, choice(inner, "approval tier", TIERS)?, inner),
                "override" => set(&mut overridable, flag(inner)?, inner),
                _ => set(&mut reason, lit_str(inner)?, inner),
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
            }) => Ok(Approval::Tier(choice_of(s, "approval tier", TIERS)?)),
            Expr::Lit(other) => Err(syn::Error::new(
                other.span(),
                "`approval` needs a tier string (`\"read\"`, `\"write\"`, `\"exec\"`) or a path to a fn of the input",
            )),
            _ => Ok(Approval::Fn(expr)),
        }
    }
}
