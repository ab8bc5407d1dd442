//! The checkpoint numeric recipe (numeric-formats sections 2 and 10) as a TOML file: which source
//! tensors become which registered format, and any source-type conversion, stated explicitly.
//!
//! ```toml
//! name = "my-model-mixed-v1"                 # recipe identity, recorded in the artifact
//! source = "org/model@rev"                   # optional source-checkpoint identity
//! skip = ["*.input_global_scale"]            # optional: source tensors deliberately left out
//!
//! [[tensor]]
//! match = "model.layers.*.self_attn.q_proj.weight"
//! format = "Q4G64_F16S"
//!
//! [[tensor]]
//! match = "model.norm.weight"
//! format = "BF16"
//! convert = "f32_to_bf16_rne"                # needed because the source is F32
//! ```
//!
//! Rules are tried in file order; the first whose `match` glob matches the output tensor name
//! wins. Globs: `*` matches any run of characters (dots included), `?` one character, every other
//! character only itself. Format names are compared exactly against the nine canonical names
//! (section 3.2).

use crate::errors::{Error, Result};
use ninfer_core::registry::Format;
use ninfer_core::word::Conversion;
use serde::Deserialize;
use std::path::Path;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RecipeToml {
    name: String,
    source: Option<String>,
    #[serde(default)]
    skip: Vec<String>,
    #[serde(default, rename = "tensor")]
    tensors: Vec<RuleToml>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RuleToml {
    #[serde(rename = "match")]
    pattern: String,
    format: String,
    convert: Option<String>,
    #[serde(default)]
    allow_non_finite: bool,
}

/// One recipe rule.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Rule {
    /// The glob over output tensor names.
    pub pattern: String,
    /// The registered target format.
    pub format: Format,
    /// The explicit source-type conversion for direct formats (`None`: same type only).
    pub convert: Option<Conversion>,
    /// Direct float formats: accept NaN/infinity words from the source (default: refuse them —
    /// a recipe constraint, numeric-formats section 3.1).
    pub allow_non_finite: bool,
}

/// A parsed recipe.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Recipe {
    /// Recipe identity.
    pub name: String,
    /// Source-checkpoint identity stated by the recipe author, if any.
    pub source: Option<String>,
    /// Globs of source tensors deliberately not converted.
    pub skip: Vec<String>,
    /// The rules, in priority order.
    pub rules: Vec<Rule>,
}

/// The conversion names a recipe may use, with the core conversion each names.
pub const CONVERSIONS: [(&str, Conversion); 8] = [
    ("identity", Conversion::Identity),
    ("f32_to_bf16_rne", Conversion::F32ToBf16Rne),
    ("f64_to_f32_rne", Conversion::F64ToF32Rne),
    ("f64_to_bf16_rne", Conversion::F64ToBf16Rne),
    ("f16_to_f32_exact", Conversion::F16ToF32Exact),
    ("bf16_to_f32_exact", Conversion::Bf16ToF32Exact),
    ("f16_to_bf16_rne", Conversion::F16ToBf16Rne),
    ("i64_to_i32_checked", Conversion::I64ToI32Checked),
];

/// The recipe spelling of a conversion.
pub fn conversion_name(c: Conversion) -> &'static str {
    CONVERSIONS
        .iter()
        .find(|(_, k)| *k == c)
        .map(|(n, _)| *n)
        .unwrap_or("identity")
}

/// The conversion a recipe spelling names (exact match).
pub fn conversion_from_name(name: &str) -> Option<Conversion> {
    CONVERSIONS.iter().find(|(n, _)| *n == name).map(|(_, c)| *c)
}

/// Glob match: `*` any run (including empty and dots), `?` one character, others literal.
/// Iterative with one backtrack point, so it runs in O(len(pattern) * len(text)) at worst.
pub fn glob_match(pattern: &str, text: &str) -> bool {
    let p: Vec<char> = pattern.chars().collect();
    let t: Vec<char> = text.chars().collect();
    let (mut pi, mut ti) = (0usize, 0usize);
    let mut star: Option<(usize, usize)> = None;
    while ti < t.len() {
        if pi < p.len() && (p[pi] == '?' || (p[pi] != '*' && p[pi] == t[ti])) {
            pi += 1;
            ti += 1;
        } else if pi < p.len() && p[pi] == '*' {
            star = Some((pi, ti));
            pi += 1;
        } else if let Some((sp, st)) = star {
            pi = sp + 1;
            ti = st + 1;
            star = Some((sp, st + 1));
        } else {
            return false;
        }
    }
    while pi < p.len() && p[pi] == '*' {
        pi += 1;
    }
    pi == p.len()
}

impl Recipe {
    /// Parse recipe TOML.
    pub fn parse(text: &str) -> Result<Recipe> {
        let raw: RecipeToml = toml::from_str(text).map_err(|e| Error::file(format!("recipe: {e}")))?;
        if raw.name.trim().is_empty() {
            return Err(Error::file("recipe: `name` must not be empty"));
        }
        let mut rules = Vec::with_capacity(raw.tensors.len());
        for (i, r) in raw.tensors.into_iter().enumerate() {
            let at =
                |msg: String| Error::file(format!("recipe rule #{} (match `{}`): {msg}", i + 1, r.pattern));
            let format = Format::from_name(&r.format).map_err(|_| {
                let names: Vec<&str> = Format::ALL.iter().map(|f| f.name()).collect();
                at(format!(
                    "`{}` is not a registered canonical format name (names are compared exactly; the nine are {})",
                    r.format,
                    names.join(", ")
                ))
            })?;
            let convert = match &r.convert {
                None => None,
                Some(c) => Some(conversion_from_name(c).ok_or_else(|| {
                    let names: Vec<&str> = CONVERSIONS.iter().map(|(n, _)| *n).collect();
                    at(format!("unknown conversion `{c}` (known: {})", names.join(", ")))
                })?),
            };
            if convert.is_some() && format.layout() != ninfer_core::registry::Layout::ContiguousLeV1 {
                return Err(at(format!(
                    "`convert` applies to the direct formats only; {} is produced by its encoder or copy path",
                    format.name()
                )));
            }
            if r.allow_non_finite && !matches!(format, Format::Bf16 | Format::Fp32) {
                return Err(at("`allow_non_finite` applies to BF16 and FP32 only".into()));
            }
            rules.push(Rule {
                pattern: r.pattern,
                format,
                convert,
                allow_non_finite: r.allow_non_finite,
            });
        }
        Ok(Recipe {
            name: raw.name,
            source: raw.source,
            skip: raw.skip,
            rules,
        })
    }

    /// Read and parse a recipe file.
    pub fn from_path(path: &Path) -> Result<Recipe> {
        let text = std::fs::read_to_string(path).map_err(|e| Error::io(path, e))?;
        Recipe::parse(&text).map_err(|e| Error {
            rule: format!("{}: {}", path.display(), e.rule),
            ..e
        })
    }

    /// The first rule matching an output tensor name.
    pub fn rule_for(&self, name: &str) -> Option<&Rule> {
        self.rules.iter().find(|r| glob_match(&r.pattern, name))
    }

    /// Whether a name matches a `skip` glob.
    pub fn skipped(&self, name: &str) -> bool {
        self.skip.iter().any(|p| glob_match(p, name))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn glob_star_question_and_literals() {
        assert!(glob_match(
            "model.layers.*.q_proj.weight",
            "model.layers.0.q_proj.weight"
        ));
        assert!(glob_match(
            "model.layers.*.q_proj.weight",
            "model.layers.10.sub.q_proj.weight"
        ));
        assert!(!glob_match(
            "model.layers.*.q_proj.weight",
            "model.layers.0.k_proj.weight"
        ));
        assert!(glob_match("*", ""));
        assert!(glob_match("a?c", "abc"));
        assert!(!glob_match("a?c", "ac"));
        assert!(glob_match("*.weight", "x.weight"));
        assert!(!glob_match("*.weight", "x.weight_scale"));
        assert!(glob_match("a*b*c", "aXXbYYc"));
        assert!(!glob_match("a*b*c", "aXXbYY"));
    }

    #[test]
    fn lookalike_format_names_and_unknown_conversions_are_refused() {
        for bad in ["Q4", "q4g64_f16s", "FP16", "INT32", "NVFP4 ", "FP8_E4M3FN"] {
            let t = format!("name = \"r\"\n[[tensor]]\nmatch = \"*\"\nformat = \"{bad}\"\n");
            let e = Recipe::parse(&t).unwrap_err();
            assert!(
                e.rule.contains("not a registered canonical format name"),
                "{bad}: {e}"
            );
        }
        let t = "name = \"r\"\n[[tensor]]\nmatch = \"*\"\nformat = \"BF16\"\nconvert = \"f32_to_bf16\"\n";
        assert!(Recipe::parse(t).unwrap_err().rule.contains("unknown conversion"));
        let t = "name = \"r\"\n[[tensor]]\nmatch = \"*\"\nformat = \"Q4G64_F16S\"\nconvert = \"f32_to_bf16_rne\"\n";
        assert!(Recipe::parse(t).unwrap_err().rule.contains("direct formats only"));
        let t = "name = \"r\"\n[[tensor]]\nmatch = \"*\"\nformat = \"BF16\"\nbogus = 1\n";
        assert!(Recipe::parse(t).is_err());
    }
}
