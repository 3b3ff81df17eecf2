//! The typed model of one tool: what the fn signature and the attributes
//! say, classified (receiver, input/context/state parameters, return
//! form) but not yet judged — [`validate`](crate::validate) does that.

use proc_macro2::Span;
use syn::spanned::Spanned;
use syn::{
    FnArg, GenericArgument, Ident, LitStr, Path, PathArguments, ReturnType, Signature, Type,
    TypeParamBound, Visibility,
};

use crate::attr::ToolAttrs;
use crate::names;

/// Where the tool fn lives.
#[derive(Clone)]
pub enum Site {
    /// A free `async fn` under `#[tool]`.
    Free,
    /// A method of an impl block under `#[tools]`; the type is `Self`.
    Method { self_ty: Box<Type> },
}

/// How the fn takes `self`.
pub enum ReceiverKind {
    /// `&self`.
    Ref,
    /// `self`, `mut self`.
    Value(Span),
    /// `&mut self`.
    RefMut(Span),
    /// `self: Arc<Self>` and other typed receivers.
    Typed(Span),
}

/// One non-receiver parameter.
pub enum Param {
    /// The input struct.
    Input(Box<Type>),
    /// `ToolContext` (`by_ref` for `&ToolContext`).
    Context { by_ref: bool, span: Span },
    /// `State<T>`: the inner `T`.
    State(Box<Type>),
}

/// What the fn returns, and so which builder handler it gets.
pub enum Return {
    /// `O` (or nothing: `()`) — wrapped in `Ok`.
    Plain(Box<Type>),
    /// `Result<O, E>` (or a one-argument `Result<O>` alias).
    Result {
        ok: Box<Type>,
        err: Option<Box<Type>>,
    },
    /// `ToolOutput<O>`.
    Output(Box<Type>),
    /// `Result<ToolOutput<O>, E>`.
    ResultOutput {
        data: Box<Type>,
        err: Option<Box<Type>>,
    },
    /// `impl Stream<Item = ToolEvent<O>>` (or `BoxStream<'_, ToolEvent<O>>`).
    Stream(Box<Type>),
    /// A stream whose item type could not be read.
    BadStream(Span),
}

impl Return {
    /// The output data type `O`.
    pub fn output(&self) -> Option<&Type> {
        match self {
            Return::Plain(o)
            | Return::Result { ok: o, .. }
            | Return::Output(o)
            | Return::ResultOutput { data: o, .. }
            | Return::Stream(o) => Some(o),
            Return::BadStream(_) => None,
        }
    }
}

/// One tool, as the macro understands it.
pub struct ToolModel {
    pub attrs: ToolAttrs,
    pub site: Site,
    pub krate: Path,
    pub vis: Visibility,
    pub fn_ident: Ident,
    /// The generated type (`NotesSearch`).
    pub type_ident: Ident,
    /// The tool name, and the token it came from (the `name = ".."`
    /// literal, or the fn ident).
    pub name: String,
    pub name_span: Span,
    /// The description (attribute, else the doc comment), if any.
    pub description: Option<String>,
    pub receiver: Option<ReceiverKind>,
    pub params: Vec<(Param, Span)>,
    pub ret: Return,
    pub sig: Signature,
}

impl ToolModel {
    /// Builds the model of `sig` (with its outer attributes' docs).
    pub fn new(
        attrs: ToolAttrs,
        site: Site,
        vis: Visibility,
        sig: &Signature,
        fn_attrs: &[syn::Attribute],
    ) -> ToolModel {
        let krate = attrs
            .krate
            .clone()
            .unwrap_or_else(|| syn::parse_quote!(::gonk_tools));
        let fn_ident = sig.ident.clone();
        let (name, name_span) = match &attrs.name {
            Some(lit) => (lit.value(), lit.span()),
            None => (names::unraw(&fn_ident), fn_ident.span()),
        };
        let type_ident = attrs.type_name.clone().unwrap_or_else(|| {
            Ident::new(
                &names::camel_case(&names::unraw(&fn_ident)),
                fn_ident.span(),
            )
        });
        let description = attrs
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
                        ReceiverKind::Typed(r.span())
                    } else if r.reference.is_none() {
                        ReceiverKind::Value(r.span())
                    } else if r.mutability.is_some() {
                        ReceiverKind::RefMut(r.span())
                    } else {
                        ReceiverKind::Ref
                    };
                    receiver = Some(kind);
                }
                FnArg::Typed(pat) => params.push((classify_param(&pat.ty), pat.span())),
            }
        }
        let ret = classify_return(&sig.output, &krate);
        ToolModel {
            attrs,
            site,
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

    /// The input type, if the fn takes one.
    pub fn input(&self) -> Option<&Type> {
        self.params.iter().find_map(|(p, _)| match p {
            Param::Input(ty) => Some(&**ty),
            _ => None,
        })
    }

    /// The state types, in parameter order.
    pub fn states(&self) -> impl Iterator<Item = &Type> {
        self.params.iter().filter_map(|(p, _)| match p {
            Param::State(ty) => Some(&**ty),
            _ => None,
        })
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

pub(crate) fn last_segment(ty: &Type) -> Option<&syn::PathSegment> {
    match ty {
        Type::Path(p) if p.qself.is_none() => p.path.segments.last(),
        Type::Group(g) => last_segment(&g.elem),
        Type::Paren(p) => last_segment(&p.elem),
        _ => None,
    }
}

pub(crate) fn type_args(segment: &syn::PathSegment) -> Vec<&Type> {
    match &segment.arguments {
        PathArguments::AngleBracketed(args) => args
            .args
            .iter()
            .filter_map(|a| match a {
                GenericArgument::Type(t) => Some(t),
                _ => None,
            })
            .collect(),
        _ => Vec::new(),
    }
}

fn is_named(ty: &Type, name: &str) -> bool {
    last_segment(ty).is_some_and(|s| s.ident == name)
}

pub(crate) fn classify_param(ty: &Type) -> Param {
    match ty {
        Type::Reference(r) if r.mutability.is_none() && is_named(&r.elem, "ToolContext") => {
            return Param::Context {
                by_ref: true,
                span: ty.span(),
            }
        }
        _ => {}
    }
    if let Some(segment) = last_segment(ty) {
        if segment.ident == "ToolContext" && segment.arguments.is_empty() {
            return Param::Context {
                by_ref: false,
                span: ty.span(),
            };
        }
        if segment.ident == "State" {
            if let [inner] = type_args(segment).as_slice() {
                return Param::State(Box::new((*inner).clone()));
            }
        }
    }
    Param::Input(Box::new(ty.clone()))
}

fn value_type(krate: &Path) -> Box<Type> {
    Box::new(syn::parse_quote!(#krate::__private::serde_json::Value))
}

/// `ToolEvent<O>` → `O`; `ToolEvent` → `Value`.
fn event_data(item: &Type, krate: &Path) -> Option<Box<Type>> {
    let segment = last_segment(item)?;
    if segment.ident != "ToolEvent" {
        return None;
    }
    match type_args(segment).as_slice() {
        [o] => Some(Box::new((*o).clone())),
        [] => Some(value_type(krate)),
        _ => None,
    }
}

pub(crate) fn classify_return(output: &ReturnType, krate: &Path) -> Return {
    let ty = match output {
        ReturnType::Default => return Return::Plain(Box::new(syn::parse_quote!(()))),
        ReturnType::Type(_, ty) => &**ty,
    };
    if let Type::ImplTrait(imp) = ty {
        for bound in &imp.bounds {
            let TypeParamBound::Trait(t) = bound else {
                continue;
            };
            let Some(segment) = t.path.segments.last() else {
                continue;
            };
            if segment.ident != "Stream" {
                continue;
            }
            if let PathArguments::AngleBracketed(args) = &segment.arguments {
                for arg in &args.args {
                    if let GenericArgument::AssocType(assoc) = arg {
                        if assoc.ident == "Item" {
                            return match event_data(&assoc.ty, krate) {
                                Some(o) => Return::Stream(o),
                                None => Return::BadStream(assoc.ty.span()),
                            };
                        }
                    }
                }
            }
            return Return::BadStream(segment.span());
        }
    }
    if let Some(segment) = last_segment(ty) {
        let args = type_args(segment);
        if segment.ident == "BoxStream" {
            return match args.as_slice().first().and_then(|i| event_data(i, krate)) {
                Some(o) => Return::Stream(o),
                None => Return::BadStream(segment.span()),
            };
        }
        if segment.ident == "Result" && !args.is_empty() && args.len() <= 2 {
            let ok = args[0];
            let err = args.get(1).map(|e| Box::new((*e).clone()));
            if let Some(inner) = last_segment(ok).filter(|s| s.ident == "ToolOutput") {
                let data = type_args(inner)
                    .first()
                    .map(|d| Box::new((*d).clone()))
                    .unwrap_or_else(|| value_type(krate));
                return Return::ResultOutput { data, err };
            }
            return Return::Result {
                ok: Box::new(ok.clone()),
                err,
            };
        }
        if segment.ident == "ToolOutput" {
            let data = args
                .first()
                .map(|d| Box::new((*d).clone()))
                .unwrap_or_else(|| value_type(krate));
            return Return::Output(data);
        }
    }
    Return::Plain(Box::new(ty.clone()))
}
