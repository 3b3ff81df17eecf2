//! The Pi adapter against the real Pi CLI: the bridge with a fixture tool
//! set, and the notes example set up the way the README says.

mod asking;
mod bridge;
mod notes;
mod skills;
