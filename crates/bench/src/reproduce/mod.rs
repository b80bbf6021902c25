//! The seed papers' experiments beside their published numbers, one module per paper.

pub mod anaheim;
pub mod ceram;
pub mod dramatic;
