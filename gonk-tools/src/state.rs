//! [`State<T>`]: shared application state handed to tools by the registry,
//! without globals.

use std::any::{Any, TypeId};
use std::collections::HashMap;
use std::ops::Deref;
use std::sync::Arc;

/// Application state of type `T`, provided to the registry with
/// `ToolRegistryBuilder::state` or
/// [`ToolRegistry::insert_state`](crate::ToolRegistry::insert_state) and
/// extracted in a handler with [`ToolContext::state`](crate::ToolContext::state)
/// (or a `State<T>` parameter of a `#[tool]` fn).
#[derive(Debug)]
pub struct State<T: ?Sized>(pub Arc<T>);

impl<T: ?Sized> Clone for State<T> {
    fn clone(&self) -> Self {
        State(Arc::clone(&self.0))
    }
}

impl<T: ?Sized> Deref for State<T> {
    type Target = T;
    fn deref(&self) -> &T {
        &self.0
    }
}

/// Type-keyed application state.
#[derive(Clone, Default)]
pub(crate) struct StateMap {
    values: HashMap<TypeId, Arc<dyn Any + Send + Sync>>,
}

impl StateMap {
    pub(crate) fn insert<T: Send + Sync + 'static>(&mut self, value: Arc<T>) {
        self.values.insert(TypeId::of::<T>(), value);
    }

    pub(crate) fn get<T: Send + Sync + 'static>(&self) -> Option<Arc<T>> {
        self.values
            .get(&TypeId::of::<T>())
            .and_then(|v| Arc::clone(v).downcast::<T>().ok())
    }

    /// The value of type `id`, not yet downcast.
    pub(crate) fn get_any(&self, id: TypeId) -> Option<Arc<dyn Any + Send + Sync>> {
        self.values.get(&id).cloned()
    }

    pub(crate) fn contains(&self, id: TypeId) -> bool {
        self.values.contains_key(&id)
    }
}
