//! For tests that assert what was traced: a `tracing` layer that keeps
//! every span (name, parent, fields as recorded) and every event (its
//! span, message, fields), to read back after the run.

use std::collections::BTreeMap;
use std::fmt::Debug;
use std::sync::{Arc, Mutex};

use tracing::field::{Field, Visit};
use tracing::span::{Attributes, Id, Record};
use tracing::{Event, Subscriber};
use tracing_subscriber::layer::{Context, SubscriberExt};
use tracing_subscriber::registry::LookupSpan;
use tracing_subscriber::Layer;

use crate::subscriber::{set_scoped_default, ScopedGuard};

/// One span as it ended up.
#[derive(Clone, Debug, Default)]
pub struct CapturedSpan {
    /// Its index in [`SpanCapture::spans`] (tracing reuses ids; these are
    /// unique).
    pub id: usize,
    /// The parent span's index, if any.
    pub parent: Option<usize>,
    /// Its static name.
    pub name: String,
    /// Every field recorded, as text (`Debug` for non-strings).
    pub fields: BTreeMap<String, String>,
    /// The spans it follows from (links), by index.
    pub follows: Vec<usize>,
}

/// One event.
#[derive(Clone, Debug, Default)]
pub struct CapturedEvent {
    /// The index of the span it happened in, if any.
    pub span: Option<usize>,
    /// Its fields, `message` included.
    pub fields: BTreeMap<String, String>,
}

#[derive(Default)]
struct Store {
    spans: Vec<CapturedSpan>,
    events: Vec<CapturedEvent>,
    /// Open spans: tracing id → index.
    live: std::collections::HashMap<u64, usize>,
}

impl Store {
    fn index(&self, id: &Id) -> Option<usize> {
        self.live.get(&id.into_u64()).copied()
    }
}

/// The captured spans and events; clone it before installing the layer.
#[derive(Clone, Default)]
pub struct SpanCapture(Arc<Mutex<Store>>);

struct Fields<'a>(&'a mut BTreeMap<String, String>);

impl Visit for Fields<'_> {
    fn record_str(&mut self, field: &Field, value: &str) {
        self.0.insert(field.name().to_owned(), value.to_owned());
    }
    fn record_debug(&mut self, field: &Field, value: &dyn Debug) {
        self.0.insert(field.name().to_owned(), format!("{value:?}"));
    }
}

impl SpanCapture {
    /// A subscriber that records everything at every level into this capture.
    pub fn subscriber(&self) -> impl Subscriber + Send + Sync {
        tracing_subscriber::registry().with(self.clone())
    }

    /// Installs the capture as this thread's default subscriber while the
    /// guard lives ([`set_scoped_default`]).
    pub fn install(&self) -> ScopedGuard {
        set_scoped_default(self.subscriber())
    }

    /// Every span so far, in creation order.
    pub fn spans(&self) -> Vec<CapturedSpan> {
        self.0.lock().unwrap().spans.clone()
    }

    /// Every event so far.
    pub fn events(&self) -> Vec<CapturedEvent> {
        self.0.lock().unwrap().events.clone()
    }

    /// The spans whose field `key` is `value`.
    pub fn find(&self, key: &str, value: &str) -> Vec<CapturedSpan> {
        self.spans()
            .into_iter()
            .filter(|s| s.fields.get(key).map(String::as_str) == Some(value))
            .collect()
    }

    /// Everything captured, as one text (to search for what must not be there).
    pub fn text(&self) -> String {
        let store = self.0.lock().unwrap();
        format!("{:?}\n{:?}", store.spans, store.events)
    }
}

impl<S> Layer<S> for SpanCapture
where
    S: Subscriber + for<'a> LookupSpan<'a>,
{
    fn on_new_span(&self, attrs: &Attributes<'_>, id: &Id, ctx: Context<'_, S>) {
        let parent = if attrs.is_root() {
            None
        } else if let Some(parent) = attrs.parent() {
            Some(parent.clone())
        } else {
            ctx.current_span().id().cloned()
        };
        let mut store = self.0.lock().unwrap();
        let mut span = CapturedSpan {
            id: store.spans.len(),
            parent: parent.and_then(|p| store.index(&p)),
            name: attrs.metadata().name().to_owned(),
            ..CapturedSpan::default()
        };
        attrs.record(&mut Fields(&mut span.fields));
        store.live.insert(id.into_u64(), span.id);
        store.spans.push(span);
    }

    fn on_close(&self, id: Id, _ctx: Context<'_, S>) {
        self.0.lock().unwrap().live.remove(&id.into_u64());
    }

    fn on_record(&self, id: &Id, values: &Record<'_>, _ctx: Context<'_, S>) {
        let mut store = self.0.lock().unwrap();
        if let Some(index) = store.index(id) {
            values.record(&mut Fields(&mut store.spans[index].fields));
        }
    }

    fn on_follows_from(&self, id: &Id, follows: &Id, _ctx: Context<'_, S>) {
        let mut store = self.0.lock().unwrap();
        if let (Some(index), Some(follows)) = (store.index(id), store.index(follows)) {
            store.spans[index].follows.push(follows);
        }
    }

    fn on_event(&self, event: &Event<'_>, ctx: Context<'_, S>) {
        let span = if let Some(parent) = event.parent() {
            Some(parent.clone())
        } else if event.is_root() {
            None
        } else {
            ctx.current_span().id().cloned()
        };
        let mut store = self.0.lock().unwrap();
        let mut captured = CapturedEvent {
            span: span.and_then(|s| store.index(&s)),
            ..CapturedEvent::default()
        };
        event.record(&mut Fields(&mut captured.fields));
        store.events.push(captured);
    }
}
