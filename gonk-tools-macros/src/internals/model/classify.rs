//! How the macros read a fn's types: each parameter is the input, the
//! `ToolContext` or a `State<T>` ([`classify_param`]); the return is a
//! plain value, a `Result`, a `ToolOutput`, or a stream ([`classify_return`]).
//! Types are recognised by their last path segment, so `gonk_tools::State<T>`
//! and an imported `State<T>` read the same.

use proc_macro2::Span;
use syn::spanned::Spanned;
use syn::{GenericArgument, Path, PathArguments, ReturnType, Type, TypeParamBound};

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

pub fn last_segment(ty: &Type) -> Option<&syn::PathSegment> {
    match ty {
        Type::Path(p) if p.qself.is_none() => p.path.segments.last(),
        Type::Group(g) => last_segment(&g.elem),
        Type::Paren(p) => last_segment(&p.elem),
        _ => None,
    }
}

pub fn type_args(segment: &syn::PathSegment) -> Vec<&Type> {
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

pub fn classify_param(ty: &Type) -> Param {
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

pub fn classify_return(output: &ReturnType, krate: &Path) -> Return {
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
