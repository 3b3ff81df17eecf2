//! The typed model of an annotated fn, shared by `#[tool]`, `#[resource]`
//! and `#[prompt]` (and the `#[tool]` methods of a `#[tools]` impl):
//! [`FnModel`] holds what the signature says — receiver, parameters
//! classified ([`classify`]: input, `ToolContext`, `State<T>`), return
//! form — and keeps the `syn` nodes, so every later error points at the
//! user's token.
//!
//! Each macro's model ([`tool`], [`resource`], [`prompt`]; the tool sets in
//! [`set`]) adds its attributes and makes the checks that concern one part
//! of one item while it is built: the signature's shape, each parameter,
//! a type named like the generated one. Checks that relate parts to each
//! other or items to each other are in [`check`](super::check).

pub mod classify;
pub mod prompt;
pub mod resource;
pub mod set;
pub mod tool;

use proc_macro2::Span;
use quote::ToTokens;
use syn::spanned::Spanned;
use syn::{FnArg, Ident, LitStr, Pat, Path, Signature, Type, Visibility};

pub use classify::{Param, Return};

use super::attr::ItemAttrs;
use super::errors::Errors;
use super::names;

/// Which fn macro a model is for: MCP's three primitives. It words the
/// messages the macros share.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Primitive {
    Tool,
    Resource,
    Prompt,
}

impl Primitive {
    /// The attribute's name: `tool`, `resource`, `prompt`.
    pub fn attribute(self) -> &'static str {
        match self {
            Primitive::Tool => "tool",
            Primitive::Resource => "resource",
            Primitive::Prompt => "prompt",
        }
    }

    /// How a message names the fn: "a tool", "a `#[resource]` fn".
    fn subject(self) -> String {
        match self {
            Primitive::Tool => "a tool".to_owned(),
            other => format!("a `#[{}]` fn", other.attribute()),
        }
    }
}

/// How a fn takes `self`.
pub enum ReceiverKind {
    /// `&self`.
    Ref,
    /// `self`, `mut self`.
    Value,
    /// `&mut self`.
    RefMut,
    /// `self: Arc<Self>` and other typed receivers.
    Typed,
}

/// The `self` parameter, and where it is.
pub struct Receiver {
    pub kind: ReceiverKind,
    pub span: Span,
}

/// One non-receiver parameter.
pub struct FnParam {
    /// A value the caller supplies (`Param::Input`: a tool's input, a
    /// template variable, a prompt's arguments), or an extractor.
    pub kind: Param,
    /// The parameter's name, when its pattern is a plain identifier.
    pub ident: Option<Ident>,
    /// The whole `name: Type`, for errors about the parameter.
    pub pat: syn::PatType,
    pub ty: Type,
}

impl FnParam {
    /// Whether this is a value the caller supplies (not an extractor).
    pub fn is_value(&self) -> bool {
        matches!(self.kind, Param::Input(_))
    }

    /// Where the parameter is.
    pub fn span(&self) -> Span {
        self.pat.span()
    }
}

/// What every fn macro knows of its fn.
pub struct FnModel {
    pub krate: Path,
    pub vis: Visibility,
    pub fn_ident: Ident,
    /// The generated type (`NotesSearch` for `fn notes_search`).
    pub type_ident: Ident,
    /// The name (`name = ".."`, else the fn name) and the token it came
    /// from (the literal, or the fn ident).
    pub name: String,
    pub name_span: Span,
    /// The description: the attribute, else the doc comment.
    pub description: Option<String>,
    pub receiver: Option<Receiver>,
    pub params: Vec<FnParam>,
    pub ret: Return,
    pub sig: Signature,
}

impl FnModel {
    /// Reads `sig` (with its outer attributes' docs) under the keys every
    /// fn macro has.
    pub fn new(
        item: &ItemAttrs,
        vis: Visibility,
        sig: &Signature,
        fn_attrs: &[syn::Attribute],
    ) -> FnModel {
        let krate = item.krate.clone().unwrap_or_else(super::default_crate);
        let fn_ident = sig.ident.clone();
        let (name, name_span) = match &item.name {
            Some(lit) => (lit.value(), lit.span()),
            None => (names::unraw(&fn_ident), fn_ident.span()),
        };
        let type_ident = item.type_name.clone().unwrap_or_else(|| {
            Ident::new(
                &names::camel_case(&names::unraw(&fn_ident)),
                fn_ident.span(),
            )
        });
        let description = item
            .description
            .as_ref()
            .map(LitStr::value)
            .or_else(|| doc_comment(fn_attrs))
            .filter(|d| !d.trim().is_empty());
        let mut receiver = None;
        let mut params = Vec::new();
        for arg in &sig.inputs {
            match arg {
                FnArg::Receiver(r) => {
                    let kind = if r.colon_token.is_some() {
                        ReceiverKind::Typed
                    } else if r.reference.is_none() {
                        ReceiverKind::Value
                    } else if r.mutability.is_some() {
                        ReceiverKind::RefMut
                    } else {
                        ReceiverKind::Ref
                    };
                    receiver = Some(Receiver {
                        kind,
                        span: r.span(),
                    });
                }
                FnArg::Typed(pat) => {
                    let ident = match &*pat.pat {
                        Pat::Ident(p) if p.by_ref.is_none() && p.subpat.is_none() => {
                            Some(p.ident.clone())
                        }
                        _ => None,
                    };
                    params.push(FnParam {
                        kind: classify::classify_param(&pat.ty),
                        ident,
                        pat: pat.clone(),
                        ty: (*pat.ty).clone(),
                    });
                }
            }
        }
        let ret = classify::classify_return(&sig.output, &krate);
        FnModel {
            krate,
            vis,
            fn_ident,
            type_ident,
            name,
            name_span,
            description,
            receiver,
            params,
            ret,
            sig: sig.clone(),
        }
    }

    /// The fn's name, without `r#`.
    pub fn fn_name(&self) -> String {
        names::unraw(&self.fn_ident)
    }

    /// The parameters the caller supplies: a tool's input, the template
    /// variables of a resource, the arguments struct of a prompt.
    pub fn values(&self) -> impl Iterator<Item = &FnParam> {
        self.params.iter().filter(|p| p.is_value())
    }

    /// The state types, in parameter order.
    pub fn states(&self) -> impl Iterator<Item = &Type> {
        self.params.iter().filter_map(|p| match &p.kind {
            Param::State(ty) => Some(&**ty),
            _ => None,
        })
    }

    /// What every fn macro needs of the signature: an `async fn`, not
    /// `const`, `unsafe`, `extern`, variadic or generic.
    pub fn check_signature(&self, primitive: Primitive, errors: &mut Errors) {
        let sig = &self.sig;
        let fn_name = self.fn_name();
        let attribute = primitive.attribute();
        let subject = primitive.subject();
        if sig.asyncness.is_none() {
            errors.push_spanned(
                sig.fn_token,
                format!("`#[{attribute}]` needs an `async fn`: write `async fn {fn_name}(..)`"),
            );
        }
        if let Some(constness) = &sig.constness {
            errors.push_spanned(
                constness,
                format!("{subject} cannot be a `const fn`: remove `const`"),
            );
        }
        if let Some(unsafety) = &sig.unsafety {
            let caller = match primitive {
                Primitive::Tool => "dispatch calls it with inputs from the network",
                _ => "it is called with values from the network",
            };
            errors.push_spanned(
                unsafety,
                format!("{subject} cannot be an `unsafe fn`: {caller}; keep the `unsafe` block inside a safe fn"),
            );
        }
        if let Some(abi) = &sig.abi {
            errors.push_spanned(
                abi,
                format!("{subject} cannot have an `extern` ABI: remove it"),
            );
        }
        if let Some(variadic) = &sig.variadic {
            errors.push_spanned(variadic, format!("{subject} cannot be variadic"));
        }
        if !sig.generics.params.is_empty() || sig.generics.where_clause.is_some() {
            let tokens = if sig.generics.params.is_empty() {
                sig.generics.where_clause.to_token_stream()
            } else {
                sig.generics.to_token_stream()
            };
            let why = match primitive {
                Primitive::Tool => format!("its input and output schemas are fixed at compile time; use concrete types in `fn {fn_name}` (write one `#[tool]` fn per type)"),
                _ => format!("what it advertises is fixed at compile time; use concrete types in `fn {fn_name}`"),
            };
            errors.push_spanned(tokens, format!("{subject} cannot be generic: {why}"));
        }
    }

    /// What a `#[resource]` or `#[prompt]` fn needs besides
    /// [`check_signature`](Self::check_signature): a free fn, `ToolContext`
    /// at most once, a name, and a returned value (`returns` says which),
    /// not a stream.
    pub fn check_primitive(&self, primitive: Primitive, returns: &str, errors: &mut Errors) {
        self.check_signature(primitive, errors);
        let attribute = primitive.attribute();
        if let Some(receiver) = &self.receiver {
            errors.push_at(
                receiver.span,
                format!("a `#[{attribute}]` fn is a free fn, not a method: take the data it needs as `State<T>` (registered with `ToolRegistry::builder().state(..)`)"),
            );
        }
        let mut ctx_seen = false;
        for param in &self.params {
            if let Param::Context { span, .. } = &param.kind {
                if ctx_seen {
                    errors.push_at(
                        *span,
                        format!("a `#[{attribute}]` fn takes `ToolContext` at most once"),
                    );
                }
                ctx_seen = true;
            }
        }
        if self.name.is_empty() {
            errors.push_at(
                self.name_span,
                format!("the {attribute} name is empty: write `name = \"...\"`, or leave it out to use the fn name"),
            );
        }
        match &self.ret {
            Return::Plain(_) | Return::Result { .. } => {}
            _ => {
                let span = match &self.sig.output {
                    syn::ReturnType::Type(_, ty) => ty.span(),
                    syn::ReturnType::Default => self.fn_ident.span(),
                };
                errors.push_at(
                    span,
                    format!("a `#[{attribute}]` fn returns {returns}, or a `Result` of one"),
                );
            }
        }
    }

    /// A type among `types` that the generated type's name would shadow
    /// (`async fn add(input: Add)`); `fix` says what to do instead.
    pub fn check_type_clash<'a>(
        &self,
        types: impl IntoIterator<Item = &'a Type>,
        primitive: Primitive,
        fix: &str,
        errors: &mut Errors,
    ) {
        let generated = names::unraw(&self.type_ident);
        for ty in types {
            if let Type::Path(path) = ty {
                if path.qself.is_none()
                    && path.path.segments.len() == 1
                    && names::unraw(&path.path.segments[0].ident) == generated
                {
                    errors.push_spanned(
                        ty,
                        format!(
                            "`#[{}]` generates a type `{generated}` for `fn {}`, and this type has the same name: {fix}",
                            primitive.attribute(),
                            self.fn_name(),
                        ),
                    );
                }
            }
        }
    }
}

/// The doc comment: `///` lines joined, one leading space stripped from
/// each, trimmed.
pub fn doc_comment(attrs: &[syn::Attribute]) -> Option<String> {
    let lines: Vec<String> = attrs
        .iter()
        .filter(|a| a.path().is_ident("doc"))
        .filter_map(|a| match &a.meta {
            syn::Meta::NameValue(nv) => match &nv.value {
                syn::Expr::Lit(syn::ExprLit {
                    lit: syn::Lit::Str(s),
                    ..
                }) => Some(s.value()),
                _ => None,
            },
            _ => None,
        })
        .map(|line| line.strip_prefix(' ').map(str::to_owned).unwrap_or(line))
        .collect();
    if lines.is_empty() {
        return None;
    }
    Some(lines.join("\n").trim().to_owned())
}
