//! A call's cancellation: the caller's token, or one made the first time
//! something needs it.

use std::cell::Cell;
use std::sync::{Arc, OnceLock};

use tokio_util::sync::CancellationToken;

/// A call's cancellation: a token the caller gave, or one made the first
/// time something needs it — a handler that reads
/// [`ToolContext::cancellation`], or dispatch once the handler waits.
/// Most calls finish without either, and a token costs two allocations
/// and a lock when it is dropped (a child also a lock on its parent).
/// Clones share it, made or not.
#[derive(Clone)]
pub(crate) enum Cancellation {
    /// The caller's token (a surface may hold the same `Arc`).
    Token(Arc<CancellationToken>),
    /// Made on first use.
    Lazy(LazyCell),
}

/// A token made on first use: a fresh one, or a child of `parent`'s.
pub(crate) struct LazyToken {
    parent: Option<Cancellation>,
    token: OnceLock<CancellationToken>,
}

thread_local! {
    /// The cell of the last call on this thread to finish, for the next
    /// one to start.
    static SPARE: Cell<Option<Arc<LazyToken>>> = const { Cell::new(None) };
}

/// A handle on a [`LazyToken`], shared by clones. The last handle dropped
/// leaves the cell, emptied, for the next call on this thread: most calls
/// never make their token, and allocating and freeing the cell cost more
/// than the rest of its life.
pub(crate) struct LazyCell(
    /// `None` only while it is dropped.
    Option<Arc<LazyToken>>,
);

impl LazyCell {
    fn new(parent: Option<Cancellation>) -> Self {
        if let Some(mut spare) = SPARE.try_with(Cell::take).ok().flatten() {
            // A spare is empty, and unique: only this thread's slot held it.
            if parent.is_none() {
                return LazyCell(Some(spare));
            }
            if let Some(cell) = Arc::get_mut(&mut spare) {
                cell.parent = parent;
                return LazyCell(Some(spare));
            }
        }
        LazyCell(Some(Arc::new(LazyToken {
            parent,
            token: OnceLock::new(),
        })))
    }

    fn get(&self) -> &LazyToken {
        self.0
            .as_deref()
            .expect("a lazy token cell is only taken when dropped")
    }
}

impl Clone for LazyCell {
    fn clone(&self) -> Self {
        LazyCell(self.0.clone())
    }
}

impl Drop for LazyCell {
    fn drop(&mut self) {
        let Some(mut cell) = self.0.take() else {
            return;
        };
        if Arc::strong_count(&cell) > 1 {
            return;
        }
        // The last handle: no one can read the cell any more, so it is
        // emptied and kept (an earlier spare is freed).
        if let Some(lazy) = Arc::get_mut(&mut cell) {
            lazy.parent = None;
            lazy.token.take();
            let _ = SPARE.try_with(|spare| spare.set(Some(cell)));
        }
    }
}

impl Cancellation {
    /// A token of its own, made on first use.
    pub(crate) fn fresh() -> Self {
        Cancellation::Lazy(LazyCell::new(None))
    }

    /// A child of this token, made on first use: cancelled when this one
    /// is, and cancelling it leaves this one alone.
    pub(crate) fn child(&self) -> Self {
        Cancellation::Lazy(LazyCell::new(Some(self.clone())))
    }

    /// The token, made now if it was not yet.
    pub(crate) fn token(&self) -> &CancellationToken {
        match self {
            Cancellation::Token(token) => token,
            Cancellation::Lazy(lazy) => {
                let lazy = lazy.get();
                lazy.token.get_or_init(|| match &lazy.parent {
                    None => CancellationToken::new(),
                    Some(parent) => parent.token().child_token(),
                })
            }
        }
    }

    /// Whether it was cancelled (a token not made yet is cancelled only
    /// through its parent).
    #[inline]
    pub(crate) fn is_cancelled(&self) -> bool {
        match self {
            Cancellation::Token(token) => token.is_cancelled(),
            Cancellation::Lazy(lazy) => {
                let lazy = lazy.get();
                match lazy.token.get() {
                    Some(token) => token.is_cancelled(),
                    None => lazy.parent.as_ref().is_some_and(Cancellation::is_cancelled),
                }
            }
        }
    }
}
