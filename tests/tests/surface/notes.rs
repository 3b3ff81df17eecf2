//! The notes example pins its tool surface (`examples/notes/surface.json`):
//! a change to a notes tool's name, schema, approval or hints fails here
//! with the change classified as breaking or additive, until it is accepted
//! with `GONK_BLESS=1`. `notes surface` prints the same JSON.

use std::process::Command;
use std::sync::Arc;

use notes::store::{Store, MEMORY};
use serde_json::Value;

use gonk_tools_tests::workspace::bin;

const GOLDEN: &str = "../examples/notes/surface.json";

fn notes_registry() -> gonk_tools::ToolRegistry {
    notes::tools::registry(Arc::new(Store::new(Some(MEMORY.into()))))
        .expect("the notes tools register")
}

#[test]
fn the_notes_surface_is_pinned() {
    gonk_tools::assert_surface!(notes_registry(), GOLDEN);
}

#[test]
fn notes_surface_prints_the_pinned_surface() {
    let output = Command::new(bin("notes"))
        .args(["--db", MEMORY, "surface"])
        .env_remove(notes::saved::ENV)
        .output()
        .expect("run notes surface");
    assert!(output.status.success(), "{output:?}");
    let printed: Value = serde_json::from_slice(&output.stdout).expect("notes surface prints JSON");
    assert_eq!(printed, gonk_tools::surface::surface(&notes_registry()));
    let golden =
        std::fs::read_to_string(std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(GOLDEN))
            .expect("the golden surface exists");
    assert_eq!(
        String::from_utf8_lossy(&output.stdout),
        golden,
        "byte for byte the pinned file"
    );
}
