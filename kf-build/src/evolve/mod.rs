//! The evolution engine: behaviour descriptors from naga's IR, the MAP-Elites archive with islands,
//! and gradient-informed steering (the paper's quality-diversity search).

pub mod descriptor;
