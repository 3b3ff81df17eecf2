//! The model of one tool: a `#[tool]` fn or a `#[tool]` method of a
//! `#[tools]` impl, with the checks that concern it alone — its name and
//! description, its signature, its receiver, its parameters, its return,
//! and the attributes that only make sense together.

use syn::{Signature, Type, Visibility};

use super::{FnModel, Param, Primitive, ReceiverKind, Return};
use crate::internals::attr::tool::ToolAttrs;
use crate::internals::errors::Errors;
use crate::rules;

/// Where the tool fn lives.
#[derive(Clone)]
pub enum Site {
    /// A free `async fn` under `#[tool]`.
    Free,
    /// A method of an impl block under `#[tools]`; the type is `Self`.
    Method { self_ty: Box<Type> },
}

/// One tool, as the macros understand it.
pub struct ToolModel {
    pub attrs: ToolAttrs,
    pub site: Site,
    pub f: FnModel,
}

impl ToolModel {
    /// Builds the model of `sig` (with its outer attributes' docs),
    /// reporting what is wrong with it into `errors`, all problems at once.
    pub fn new(
        attrs: ToolAttrs,
        site: Site,
        vis: Visibility,
        sig: &Signature,
        fn_attrs: &[syn::Attribute],
        errors: &mut Errors,
    ) -> ToolModel {
        let f = FnModel::new(&attrs.item, vis, sig, fn_attrs);
        let model = ToolModel { attrs, site, f };
        model.check(errors);
        model
    }

    /// The input type, if the fn takes one.
    pub fn input(&self) -> Option<&Type> {
        self.f.params.iter().find_map(|p| match &p.kind {
            Param::Input(ty) => Some(&**ty),
            _ => None,
        })
    }

    fn check(&self, errors: &mut Errors) {
        let f = &self.f;
        let sig = &f.sig;
        let fn_name = f.fn_name();

        if let Err(error) = rules::check_tool_name(&f.name) {
            let fix = if self.attrs.item.name.is_some() {
                format!("{}, e.g. `notes.search`", rules::NAME_RULE)
            } else {
                format!("the name defaults to the fn name; rename `{fn_name}` or set `#[tool(name = \"...\")]`")
            };
            errors.push_at(
                f.name_span,
                format!("invalid tool name: {} ({fix})", error.describe(&f.name)),
            );
        }

        if f.description.is_none() {
            errors.push_spanned(
                &f.fn_ident,
                format!(
                    "tool `{}` has no description: add a doc comment (`/// What it does.`) above `fn {fn_name}` or `#[tool(description = \"...\")]`; models read it to pick the tool",
                    f.name
                ),
            );
        }

        f.check_signature(Primitive::Tool, errors);

        match (&self.site, &f.receiver) {
            (Site::Free, Some(_)) => {
                let receiver = sig.inputs.first();
                errors.push_spanned(
                    receiver,
                    "a `#[tool]` method needs `#[tools]` on its impl block: write `#[tools] impl MyType { #[tool] async fn .. }`",
                );
            }
            (Site::Method { .. }, None) => {
                errors.push_spanned(
                    &f.fn_ident,
                    format!("`{fn_name}` in a `#[tools]` impl has no `&self`: take `&self`, or move it out of the impl as a free `#[tool]` fn"),
                );
            }
            (_, Some(receiver)) => match receiver.kind {
                ReceiverKind::Value => errors.push_at(
                    receiver.span,
                    "a tool method takes `&self`, not `self`: a tool is called many times, so it cannot consume its receiver",
                ),
                ReceiverKind::RefMut => errors.push_at(
                    receiver.span,
                    "a tool method takes `&self`, not `&mut self`: calls run concurrently; keep mutable state behind a `Mutex` or `RwLock`",
                ),
                ReceiverKind::Typed => errors.push_at(
                    receiver.span,
                    "a tool method takes plain `&self` (the tool set holds the receiver in an `Arc`)",
                ),
                ReceiverKind::Ref => {}
            },
            _ => {}
        }

        self.check_params(errors);

        let generated = crate::internals::names::unraw(&f.type_ident);
        let fix = if self.attrs.item.type_name.is_some() {
            "choose another `type_name`".to_owned()
        } else {
            format!("rename the type (e.g. `{generated}Input`) or set `#[tool(type_name = {generated}Tool)]`")
        };
        let types = f
            .params
            .iter()
            .filter_map(|p| match &p.kind {
                Param::Input(ty) | Param::State(ty) => Some(&**ty),
                Param::Context { .. } => None,
            })
            .chain(f.ret.output());
        f.check_type_clash(types, Primitive::Tool, &fix, errors);

        if let Return::BadStream(span) = &f.ret {
            errors.push_at(
                *span,
                "a streaming tool returns `impl Stream<Item = ToolEvent<O>>`: name the item type so the output type `O` is known",
            );
        }

        if self.attrs.output_schema.as_ref().is_some_and(|b| b.value) {
            let lit = self.attrs.output_schema.as_ref();
            errors.push_spanned(
                lit,
                "`output_schema = true` is the default; write `output_schema = false` to opt out, or remove the key",
            );
        }
        if self.attrs.degraded_description.is_some() && self.attrs.capability_for.is_none() {
            errors.push_spanned(
                self.attrs.degraded_description.as_ref(),
                "`degraded_description` is shown only when `capability_for` reports Degraded: add `capability_for = path::to_probe`",
            );
        }
    }

    /// One input, owned and concrete; `ToolContext` at most once.
    fn check_params(&self, errors: &mut Errors) {
        let mut input_seen: Option<String> = None;
        let mut ctx_seen = false;
        for param in &self.f.params {
            let span = param.span();
            match &param.kind {
                Param::Input(ty) => {
                    if let syn::Type::ImplTrait(_) = &**ty {
                        errors.push_at(span, "a tool's input cannot be `impl Trait`: use a concrete type that derives `Deserialize` and `JsonSchema`");
                        continue;
                    }
                    if let syn::Type::Reference(_) = &**ty {
                        errors.push_at(span, "a tool's input is owned: take it by value (`input: MyInput`), not by reference");
                        continue;
                    }
                    let this = quote::ToTokens::to_token_stream(&**ty).to_string();
                    match &input_seen {
                        Some(first) => errors.push_at(
                            span,
                            format!("a tool takes one input parameter, and `{first}` is already the input: put every field in one struct that derives `Deserialize` and `JsonSchema`, or take `ToolContext` / `State<T>` here"),
                        ),
                        None => input_seen = Some(this),
                    }
                }
                Param::Context { span: ctx_span, .. } => {
                    if ctx_seen {
                        errors.push_at(*ctx_span, "a tool takes `ToolContext` at most once");
                    }
                    ctx_seen = true;
                }
                Param::State(_) => {}
            }
        }
    }
}
