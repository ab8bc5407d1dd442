// Found by `search_division_disagreement(g, 0x3c01, 2000)` (see tests.rs) and pinned here so
// the evidence does not depend on the search: (scheme, scale16, x bits).
const PINNED: [(Grouped, u16, u32); 4] = [
    (Grouped::Q4, 0x3c67, 0x4076_87ff),
    (Grouped::Q5, 0x3c2e, 0x40fa_c7ff),
    (Grouped::Q6, 0x3c20, 0x417f_bfff),
    (Grouped::W8, 0x3c11, 0x427e_2681),
];
