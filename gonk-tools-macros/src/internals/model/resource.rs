//! The model of one `#[resource]` fn: the fn, its attributes and its URI
//! template (parsed at compile time by [`template`]),
//! with the checks that concern one part of it: the fn's shape and each
//! template-variable parameter's. That the template's variables and the
//! parameters match is [`check::resource`](crate::internals::check::resource).

use syn::{Ident, Signature, Type, Visibility};

use super::{FnModel, FnParam, Primitive};
use crate::internals::attr::primitive::ResourceAttrs;
use crate::internals::errors::Errors;
use crate::internals::names;
use crate::internals::template::{self, Template, TemplateError};

/// What a resource fn may return, for messages.
const RETURNS: &str = "its contents: `String` (text), `Vec<u8>` (bytes), `ResourceContents`, `Vec<ResourceContents>` or `Json<T>`";

/// One `#[resource]` fn.
pub struct ResourceModel {
    pub attrs: ResourceAttrs,
    pub f: FnModel,
    pub template: Result<Template, TemplateError>,
}

impl ResourceModel {
    /// Builds the model of `sig` (with its outer attributes' docs),
    /// reporting what is wrong with one part of it into `errors`.
    pub fn new(
        attrs: ResourceAttrs,
        vis: Visibility,
        sig: &Signature,
        fn_attrs: &[syn::Attribute],
        errors: &mut Errors,
    ) -> Self {
        let f = FnModel::new(&attrs.item, vis, sig, fn_attrs);
        let template = template::parse(&attrs.uri.value());
        let model = ResourceModel { attrs, f, template };
        model.check(errors);
        model
    }

    /// The parameter of template variable `name`, if there is one.
    pub fn param_of(&self, name: &str) -> Option<&FnParam> {
        self.f
            .values()
            .find(|p| p.ident.as_ref().is_some_and(|i| names::unraw(i) == name))
    }

    /// The value parameters that can be template variables (owned,
    /// concrete, a plain name), with their names; the others are refused
    /// while the model is built.
    pub fn variable_params(&self) -> impl Iterator<Item = (&FnParam, &Ident)> {
        self.f.values().filter_map(|param| {
            if matches!(param.ty, Type::Reference(_) | Type::ImplTrait(_)) {
                return None;
            }
            Some((param, param.ident.as_ref()?))
        })
    }

    fn check(&self, errors: &mut Errors) {
        let f = &self.f;
        f.check_primitive(Primitive::Resource, RETURNS, errors);
        for param in f.values() {
            if matches!(param.ty, Type::Reference(_)) {
                errors.push_spanned(
                    &param.pat,
                    "a template variable is read from the URI into an owned value: take `String`, not `&str` (or another owned type, e.g. `u64`)",
                );
            } else if matches!(param.ty, Type::ImplTrait(_)) {
                errors.push_spanned(
                    &param.pat,
                    "a template variable cannot be `impl Trait`: use a concrete type that deserializes from the URI text (`String`, `u64`, ..)",
                );
            } else if param.ident.is_none() {
                errors.push_spanned(
                    &param.pat,
                    "a template variable parameter is a plain name, the variable's: `id: u64` for `{id}`",
                );
            }
        }
        let generated = names::unraw(&f.type_ident);
        let fix = format!("rename the type or set `#[resource(type_name = {generated}Resource)]`");
        let values = f.values().map(|p| &p.ty);
        f.check_type_clash(
            values.chain(f.ret.output()),
            Primitive::Resource,
            &fix,
            errors,
        );
    }
}
