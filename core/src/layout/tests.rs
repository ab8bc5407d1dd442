//! Layout tests live in the facade crate's `tests/layouts.rs` (they read the golden vectors);
//! these are the geometry checks that need no files.

use super::*;
use crate::registry::{Format, Layout};

#[test]
fn placeholder_geometry_compiles() {
    let d = TensorDesc::for_format(Format::Q4G64F16S, &[2, 65]).unwrap();
    assert_eq!(d.layout(), Layout::RowSplitK128V1);
}
