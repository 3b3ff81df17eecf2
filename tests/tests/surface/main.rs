//! Tool-surface snapshots: change kinds detected and classified, the
//! golden file rewritten only with `GONK_BLESS=1`, and the notes example's
//! pinned surface.

mod notes;
mod primitives;
mod snapshot;
