//! The typed model of one `#[resource]` or `#[prompt]` fn: the signature
//! classified with the `#[tool]` machinery ([`crate::model`]: the
//! `State<T>` and `ToolContext` extractors, the return form), the template
//! parsed; not yet judged — [`validate`](super::validate) does that.

use proc_macro2::Span;
use syn::spanned::Spanned;
use syn::{FnArg, Ident, LitStr, Pat, Path, Signature, Type, Visibility};

use super::attr::{Common, PromptAttrs, ResourceAttrs};
use super::template::{self, Template, TemplateError};
use crate::model::{classify_param, classify_return, doc_comment, Param, Return};
use crate::names;

/// One non-receiver parameter.
pub struct FnParam {
    /// A template variable or the prompt's arguments (`Param::Input`),
    /// or an extractor.
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
}

/// What `#[resource]` and `#[prompt]` both know of their fn.
pub struct FnModel {
    pub krate: Path,
    pub vis: Visibility,
    pub fn_ident: Ident,
    /// The generated unit struct (`Note` for `fn note`).
    pub type_ident: Ident,
    /// The name (`name = ".."`, else the fn name) and where it came from.
    pub name: String,
    pub name_span: Span,
    /// The description: the attribute, else the doc comment.
    pub description: Option<String>,
    /// The span of `self`, if the fn takes one.
    pub receiver: Option<Span>,
    pub params: Vec<FnParam>,
    pub ret: Return,
    pub sig: Signature,
}

impl FnModel {
    fn new(common: &Common, vis: Visibility, sig: &Signature, fn_attrs: &[syn::Attribute]) -> Self {
        let krate = common
            .krate
            .clone()
            .unwrap_or_else(|| syn::parse_quote!(::gonk_tools));
        let fn_ident = sig.ident.clone();
        let (name, name_span) = match &common.name {
            Some(lit) => (lit.value(), lit.span()),
            None => (names::unraw(&fn_ident), fn_ident.span()),
        };
        let type_ident = common.type_name.clone().unwrap_or_else(|| {
            Ident::new(
                &names::camel_case(&names::unraw(&fn_ident)),
                fn_ident.span(),
            )
        });
        let description = common
            .description
            .as_ref()
            .map(LitStr::value)
            .or_else(|| doc_comment(fn_attrs))
            .filter(|d| !d.trim().is_empty());
        let mut receiver = None;
        let mut params = Vec::new();
        for arg in &sig.inputs {
            match arg {
                FnArg::Receiver(r) => receiver = Some(r.span()),
                FnArg::Typed(pat) => {
                    let ident = match &*pat.pat {
                        Pat::Ident(p) if p.by_ref.is_none() && p.subpat.is_none() => {
                            Some(p.ident.clone())
                        }
                        _ => None,
                    };
                    params.push(FnParam {
                        kind: classify_param(&pat.ty),
                        ident,
                        pat: pat.clone(),
                        ty: (*pat.ty).clone(),
                    });
                }
            }
        }
        let ret = classify_return(&sig.output, &krate);
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

    /// The parameters the caller supplies: template variables of a
    /// resource, the arguments struct of a prompt.
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
}

/// One `#[resource]` fn.
pub struct ResourceModel {
    pub attrs: ResourceAttrs,
    pub f: FnModel,
    pub template: Result<Template, TemplateError>,
}

impl ResourceModel {
    /// Builds the model of `sig` (with its outer attributes' docs).
    pub fn new(
        attrs: ResourceAttrs,
        vis: Visibility,
        sig: &Signature,
        fn_attrs: &[syn::Attribute],
    ) -> Self {
        let f = FnModel::new(&attrs.common, vis, sig, fn_attrs);
        let template = template::parse(&attrs.uri.value());
        ResourceModel { attrs, f, template }
    }

    /// The parameter of template variable `name`, if there is one.
    pub fn param_of(&self, name: &str) -> Option<&FnParam> {
        self.f
            .values()
            .find(|p| p.ident.as_ref().is_some_and(|i| names::unraw(i) == name))
    }
}

/// One `#[prompt]` fn.
pub struct PromptModel {
    pub attrs: PromptAttrs,
    pub f: FnModel,
}

impl PromptModel {
    /// Builds the model of `sig` (with its outer attributes' docs).
    pub fn new(
        attrs: PromptAttrs,
        vis: Visibility,
        sig: &Signature,
        fn_attrs: &[syn::Attribute],
    ) -> Self {
        let f = FnModel::new(&attrs.common, vis, sig, fn_attrs);
        PromptModel { attrs, f }
    }

    /// The arguments type, if the fn takes one.
    pub fn arguments(&self) -> Option<&Type> {
        self.f.values().next().map(|p| &p.ty)
    }
}
