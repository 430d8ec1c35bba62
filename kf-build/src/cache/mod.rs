//! What a tune leaves behind, and the tools that look after it.
//!
//! The last stage of the pipeline: [`store`] writes cache entries and ceilings (the only writer
//! under `kernelfoundry/`), [`run`] keeps run directories so a tune can resume and `bench` and
//! `report` can read it, [`listing`] is what `list` shows, and [`tools`] judges the committed
//! cache (`cache verify`, `gc`, `merge`).

pub mod listing;
pub mod run;
pub mod store;
pub mod tools;
