//! The `ninfer` binary end to end: convert, inspect (table and JSON), verify against the source,
//! bench, and the bad-input classes with their exit codes, messages and absent outputs.

use ninfer::demo::{ct_fp8_channel, ct_nvfp4, dense_weights, write_safetensors, Rng, StTensor};
use safetensors::tensor::Dtype;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn ninfer(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_ninfer"))
        .args(args)
        .output()
        .expect("run ninfer")
}

fn text(o: &Output) -> (String, String) {
    (
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

struct Fixture {
    _dir: tempfile::TempDir,
    dir: PathBuf,
    src: PathBuf,
    recipe: PathBuf,
}

const RECIPE: &str = r#"name = "cli-fixture"

[[tensor]]
match = "l.norm"
format = "BF16"

[[tensor]]
match = "l.q"
format = "Q4G64_F16S"

[[tensor]]
match = "l.up.weight"
format = "NVFP4"

[[tensor]]
match = "l.down.weight"
format = "FP8_E4M3FN_ROW_BF16S"

[[tensor]]
match = "l.ids"
format = "I32"
"#;

fn tensors() -> Vec<StTensor> {
    let mut rng = Rng::new(11);
    let q = dense_weights(&mut rng, 4, 130, 0.05);
    let up = dense_weights(&mut rng, 3, 32, 0.05);
    let down = dense_weights(&mut rng, 2, 40, 0.05);
    let (packed, scales, global) = ct_nvfp4(&up, 3, 32);
    let (codes, rs) = ct_fp8_channel(&down, 2, 40);
    vec![
        StTensor::bf16("l.norm", &[16], &[1.0; 16]),
        StTensor::bf16("l.q", &[4, 130], &q),
        StTensor::new("l.up.weight_packed", Dtype::U8, &[3, 16], packed),
        StTensor::new("l.up.weight_scale", Dtype::F8_E4M3, &[3, 2], scales),
        StTensor::f32("l.up.weight_global_scale", &[1], &[global]),
        StTensor::new("l.down.weight", Dtype::F8_E4M3, &[2, 40], codes),
        StTensor::new(
            "l.down.weight_scale",
            Dtype::BF16,
            &[2, 1],
            rs.iter().flat_map(|s| s.to_le_bytes()).collect(),
        ),
        StTensor::new(
            "l.ids",
            Dtype::I32,
            &[3],
            [7i32, 8, 9].iter().flat_map(|v| v.to_le_bytes()).collect(),
        ),
    ]
}

fn fixture(ts: &[StTensor], recipe: &str) -> Fixture {
    let d = tempfile::tempdir().unwrap();
    let dir = d.path().to_path_buf();
    let src = dir.join("in.safetensors");
    write_safetensors(&src, ts, None).unwrap();
    let rp = dir.join("recipe.toml");
    std::fs::write(&rp, recipe).unwrap();
    Fixture {
        _dir: d,
        dir,
        src,
        recipe: rp,
    }
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

fn convert(f: &Fixture, out: &Path) -> Output {
    ninfer(&["convert", s(&f.src), s(out), "--recipe", s(&f.recipe), "--quiet"])
}

fn assert_refused(o: &Output, out: &Path, tensor: &str, phrase: &str) {
    let (so, se) = text(o);
    assert_eq!(o.status.code(), Some(1), "stdout {so}\nstderr {se}");
    assert!(
        se.contains(&format!("tensor `{tensor}`")),
        "stderr does not name `{tensor}`: {se}"
    );
    assert!(se.contains(phrase), "stderr lacks `{phrase}`: {se}");
    assert!(!out.exists(), "output file exists after a failure");
    for e in std::fs::read_dir(out.parent().unwrap()).unwrap() {
        let n = e.unwrap().file_name().to_string_lossy().into_owned();
        assert!(!n.ends_with(".partial"), "temporary file left: {n}");
    }
}

#[test]
fn convert_inspect_verify_bench_round_trip() {
    let f = fixture(&tensors(), RECIPE);
    let out = f.dir.join("m.ninfer");
    let o = convert(&f, &out);
    let (so, se) = text(&o);
    assert!(o.status.success(), "{so}{se}");
    assert!(so.contains("5 tensors"), "{so}");

    let o = ninfer(&["inspect", s(&out)]);
    let (so, _) = text(&o);
    assert!(o.status.success());
    for needle in [
        "l.up.weight",
        "NVFP4",
        "blockscale-k16-m128x4-v1",
        "MAXABS_F16_RECIP_RNE_V1",
        "copied from source",
        "recipe:  cli-fixture",
    ] {
        assert!(so.contains(needle), "inspect lacks {needle}: {so}");
    }

    let o = ninfer(&["inspect", s(&out), "--json"]);
    assert!(o.status.success());
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["container_version"], 1);
    let ts = v["tensors"].as_array().unwrap();
    assert_eq!(ts.len(), 5);
    let up = ts.iter().find(|t| t["name"] == "l.up.weight").unwrap();
    assert_eq!(up["format"], "NVFP4");
    assert_eq!(up["shape"], serde_json::json!([3, 32]));
    assert_eq!(up["sources"].as_array().unwrap().len(), 3);
    assert_eq!(up["payload_offset"].as_u64().unwrap() % 128, 0);

    let o = ninfer(&["verify", s(&out), "--source", s(&f.src)]);
    let (so, se) = text(&o);
    assert!(o.status.success(), "{so}{se}");
    assert!(so.contains("canonical re-encode parity"), "{so}");
    assert!(so.contains("exact words"), "{so}");
    assert!(so.contains("verified"), "{so}");

    let o = ninfer(&["verify", s(&out)]);
    assert!(o.status.success());

    // A short bench of the artifact with `extra` options.
    let bench = |extra: &[&str]| {
        ninfer(&[&["bench", s(&out), "--seconds", "0.001", "--bw-mib", "8"], extra].concat())
    };
    let o = bench(&[]);
    let (so, se) = text(&o);
    assert!(o.status.success(), "{se}");
    assert!(so.contains("read bandwidth") && so.contains("of bw"), "{so}");
    assert!(so.contains("measured again after the kernels"), "{so}");
    assert!(
        so.contains("l.q") && so.contains("gemv I8") && so.contains("dequant f32"),
        "{so}"
    );
    // An artifact's tensors default to `auto` placement; `--placement` is checked.
    assert!(so.contains("placement auto"), "{so}");
    let o = bench(&["--placement", "cache"]);
    let (so, se) = text(&o);
    assert!(o.status.success(), "{se}");
    assert!(so.contains("placement cache") && !so.contains(" mem "), "{so}");
    let o = ninfer(&["bench", s(&out), "--placement", "disk"]);
    let (_, se) = text(&o);
    assert!(!o.status.success());
    assert!(se.contains("--placement: `disk`"), "{se}");

    // `--formats` and `--kernels` select the artifact's tensors and rows.
    let o = bench(&[
        "--threads",
        "1",
        "--formats",
        "NVFP4,Q4G64_F16S",
        "--kernels",
        "dequant-f32,gemv-i8",
    ]);
    let (so, se) = text(&o);
    assert!(o.status.success(), "{se}");
    let rows: Vec<(&str, String)> = so
        .lines()
        .filter(|l| l.starts_with("l."))
        .map(|l| {
            let w: Vec<&str> = l.split_whitespace().collect();
            (w[0], format!("{} {}", w[1], w[2]))
        })
        .collect();
    assert_eq!(
        rows,
        [
            ("l.q", "gemv I8".to_string()),
            ("l.q", "dequant f32".to_string()),
            ("l.up.weight", "gemv I8".to_string()),
            ("l.up.weight", "dequant f32".to_string()),
        ],
        "{so}"
    );
    // With `--json` each row's label is the tensor's name.
    let o = bench(&["--threads", "1", "--kernels", "dequant-bf16", "--json"]);
    let (so, se) = text(&o);
    assert!(o.status.success(), "{se}");
    let v: serde_json::Value = serde_json::from_str(&so).expect("stdout is one JSON document");
    let labels: Vec<&str> = v["rows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["label"].as_str().unwrap())
        .collect();
    // In the container's order (sorted by name); I32 has no row.
    assert_eq!(labels, ["l.down.weight", "l.norm", "l.q", "l.up.weight"], "{so}");
    assert_eq!(v["placement"], "auto");
    // An artifact has no encoder rows: a selection of only that measures nothing, and says so
    // before it measures the bandwidth.
    let o = ninfer(&["bench", s(&out), "--kernels", "encode-f32"]);
    let (so, se) = text(&o);
    assert_eq!(o.status.code(), Some(1));
    assert!(se.contains("nothing to measure"), "{se}");
    assert!(!so.contains("read bandwidth"), "{so}");
}

/// `ninfer bench --isa/--formats/--kernels` on the built-in tensors: the rows are exactly the
/// selected kernels of the selected formats, on the named instruction set; bad names and
/// empty selections fail with a message naming the choices, before anything is measured.
#[test]
fn bench_runs_the_selected_isa_formats_and_kernels_and_refuses_bad_names() {
    let base = [
        "bench",
        "--shape",
        "4x128",
        "--seconds",
        "0.001",
        "--bw-mib",
        "8",
        "--threads",
        "1",
    ];
    let run = |extra: &[&str]| ninfer(&[&base[..], extra].concat());
    let o = run(&[
        "--isa",
        "scalar",
        "--formats",
        "BF16,Q5G64_F16S,BF16",
        "--kernels",
        "encode-f32,dequant bf16,gemv_F32",
    ]);
    let (so, se) = text(&o);
    assert!(o.status.success(), "{se}");
    assert!(so.contains("isa Scalar,"), "{so}");
    let rows: Vec<String> = so
        .lines()
        .filter(|l| l.contains(" 4x128 "))
        .map(|l| l.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .collect();
    assert_eq!(
        rows,
        [
            "BF16 gemv F32",
            "BF16 dequant bf16",
            "Q5G64_F16S gemv F32",
            "Q5G64_F16S dequant bf16",
            "Q5G64_F16S encode f32",
        ],
        "{so}"
    );

    // `--json`: stdout is one JSON document of the same rows, the table goes to stderr.
    let o = run(&[
        "--isa",
        "scalar",
        "--formats",
        "NVFP4",
        "--kernels",
        "gemv-i8,dequant-f32",
        "--json",
    ]);
    let (so, se) = text(&o);
    assert!(o.status.success(), "{se}");
    assert!(se.contains("NVFP4                  gemv I8"), "{se}");
    let v: serde_json::Value = serde_json::from_str(&so).expect("stdout is one JSON document");
    assert_eq!(v["isa"], "Scalar");
    assert_eq!(v["placement"], "memory");
    let bw = |t: u64| {
        let b = v["bandwidth"]
            .as_array()
            .unwrap()
            .iter()
            .find(|b| b["threads"] == t);
        b.unwrap()["bytes_per_s"].as_f64().unwrap()
    };
    assert_eq!(v["bandwidth_after"].as_array().unwrap().len(), 1);
    let rows = v["rows"].as_array().unwrap();
    let got: Vec<(&str, u64)> = rows
        .iter()
        .map(|r| (r["kernel"].as_str().unwrap(), r["threads"].as_u64().unwrap()))
        .collect();
    let want = [("gemv-i8", 1), ("dequant-f32", 1)];
    assert_eq!(got, want, "{so}");
    for r in rows {
        assert_eq!(r["format"], "NVFP4");
        assert_eq!(r["shape"], serde_json::json!([4, 128]));
        assert_eq!(r["weights"], 512);
        let (secs, wps, bps) = (
            r["seconds"].as_f64().unwrap(),
            r["weights_per_s"].as_f64().unwrap(),
            r["bytes_per_s"].as_f64().unwrap(),
        );
        assert!((wps * secs - 512.0).abs() < 1e-6, "{r}");
        assert!(
            (bps * secs - r["weight_bytes"].as_f64().unwrap()).abs() < 1e-6,
            "{r}"
        );
        let of_bw = r["of_bw"].as_f64().unwrap();
        assert!(
            (of_bw - bps / bw(r["threads"].as_u64().unwrap())).abs() <= 1e-12 * of_bw,
            "{r}"
        );
        let of_local = r["of_local"].as_f64().unwrap();
        let local = r["local_bytes_per_s"].as_f64().unwrap();
        assert!((of_local - bps / local).abs() <= 1e-12 * of_local, "{r}");
    }

    let unavailable = if cfg!(target_arch = "x86_64") {
        "Neon"
    } else {
        "V3"
    };
    for (args, needle) in [
        (&["--isa", "V9"][..], "--isa: `V9` is not one of V4, V4NoVnni, V3"),
        (
            &["--isa", unavailable][..],
            "is not available on this CPU (available: ",
        ),
        (
            &["--formats", "Q4"][..],
            "--formats: `Q4` is not a format name (one of Q4G64_F16S",
        ),
        (
            &["--formats", "I32"][..],
            "--formats: I32 has no kernel the report measures",
        ),
        (
            &["--kernels", "gemv"][..],
            "--kernels: `gemv` is not one of gemv-f32, gemv-i8",
        ),
        (
            &["--formats", "FP8_E4M3FN_ROW_BF16S", "--kernels", "gemv-i8"][..],
            "nothing to measure: the selected formats have none of the selected kernels \
             (FP8_E4M3FN_ROW_BF16S: gemv-f32, dequant-f32, dequant-bf16)",
        ),
    ] {
        let o = run(args);
        let (so, se) = text(&o);
        assert_eq!(o.status.code(), Some(1), "{args:?}: {so}{se}");
        assert!(se.contains(needle), "{args:?}: {se}");
        assert!(!so.contains("read bandwidth"), "{args:?}: {so}");
    }
}

#[test]
fn damaged_artifacts_fail_verify_and_inspect_with_a_named_rule() {
    let f = fixture(&tensors(), RECIPE);
    let out = f.dir.join("m.ninfer");
    assert!(convert(&f, &out).status.success());
    let good = std::fs::read(&out).unwrap();
    // Truncated.
    std::fs::write(&out, &good[..good.len() / 2]).unwrap();
    let o = ninfer(&["verify", s(&out)]);
    let (_, se) = text(&o);
    assert_eq!(o.status.code(), Some(1));
    assert!(se.contains("truncated"), "{se}");
    // A flipped bit in a payload names the tensor.
    let b = ninfer_core::container::Container::open(&good).unwrap();
    let q = b.find("l.q").unwrap();
    let mut bad = good.clone();
    bad[q.payload_offset as usize + 10] ^= 0x40;
    std::fs::write(&out, &bad).unwrap();
    let o = ninfer(&["inspect", s(&out)]);
    let (_, se) = text(&o);
    assert_eq!(o.status.code(), Some(1));
    assert!(se.contains("tensor `l.q`") && se.contains("checksum"), "{se}");
    // Not a container at all.
    std::fs::write(
        &out,
        b"definitely not a container, but long enough to hold a header ......",
    )
    .unwrap();
    let o = ninfer(&["verify", s(&out)]);
    assert!(text(&o).1.contains("bad magic"));
    // verify --source detects a source that changed after conversion.
    std::fs::write(&out, &good).unwrap();
    let mut ts = tensors();
    ts[1] = StTensor::bf16("l.q", &[4, 130], &vec![0.125; 520]);
    write_safetensors(&f.src, &ts, None).unwrap();
    let o = ninfer(&["verify", s(&out), "--source", s(&f.src)]);
    let (_, se) = text(&o);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        se.contains("tensor `l.q`") && se.contains("canonical re-encode parity fails"),
        "{se}"
    );
}

#[test]
fn bad_inputs_exit_nonzero_name_the_tensor_and_write_nothing() {
    // Non-finite source into the canonical encoder.
    let mut ts = tensors();
    let mut q = vec![0.1f32; 520];
    q[300] = f32::INFINITY;
    ts[1] = StTensor::bf16("l.q", &[4, 130], &q);
    let f = fixture(&ts, RECIPE);
    let out = f.dir.join("m.ninfer");
    assert_refused(&convert(&f, &out), &out, "l.q", "NaN or infinite");

    // NVFP4 negative block scale and zero divisor.
    let mut ts = tensors();
    ts[3].data[1] |= 0x80;
    let f = fixture(&ts, RECIPE);
    let out = f.dir.join("m.ninfer");
    assert_refused(&convert(&f, &out), &out, "l.up.weight", "is negative");
    let mut ts = tensors();
    ts[4] = StTensor::f32("l.up.weight_global_scale", &[1], &[0.0]);
    let f = fixture(&ts, RECIPE);
    let out = f.dir.join("m.ninfer");
    assert_refused(&convert(&f, &out), &out, "l.up.weight", "d_w");

    // Lookalike format names are refused at recipe parse time (file-level error, exit 1).
    let f = fixture(&tensors(), &RECIPE.replace("\"Q4G64_F16S\"", "\"Q4G64_f16s\""));
    let out = f.dir.join("m.ninfer");
    let o = convert(&f, &out);
    assert_eq!(o.status.code(), Some(1));
    assert!(text(&o).1.contains("not a registered canonical format name"));
    assert!(!out.exists());

    // Unsupported pair: I32 source into a quantized format.
    let f = fixture(
        &tensors(),
        &RECIPE.replace(
            "match = \"l.ids\"\nformat = \"I32\"",
            "match = \"l.ids\"\nformat = \"W8G32_F16S\"",
        ),
    );
    let out = f.dir.join("m.ninfer");
    assert_refused(&convert(&f, &out), &out, "l.ids", "unsupported pair");

    // A tensor no rule covers.
    let f = fixture(
        &tensors(),
        &RECIPE.replace("match = \"l.norm\"", "match = \"l.nrm\""),
    );
    let out = f.dir.join("m.ninfer");
    assert_refused(&convert(&f, &out), &out, "l.norm", "no recipe rule matches");

    // An existing output survives a failed conversion.
    let mut ts = tensors();
    ts[4] = StTensor::f32("l.up.weight_global_scale", &[1], &[-1.0]);
    let f = fixture(&ts, RECIPE);
    let out = f.dir.join("m.ninfer");
    std::fs::write(&out, b"keep me").unwrap();
    let o = convert(&f, &out);
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(std::fs::read(&out).unwrap(), b"keep me");

    // Missing input and a bad command line.
    let o = ninfer(&[
        "convert",
        "/nonexistent/x.safetensors",
        s(&f.dir.join("o.ninfer")),
        "--recipe",
        s(&f.recipe),
    ]);
    assert_eq!(o.status.code(), Some(1));
    assert!(text(&o).1.contains("/nonexistent/x.safetensors"));
    let o = ninfer(&["convert", "only-one-path"]);
    assert_eq!(o.status.code(), Some(2));
}

#[test]
fn a_convert_killed_part_way_leaves_the_target_path_untouched() {
    // Many tensors so the conversion runs long enough to be killed while the temporary file is
    // being written. SIGKILL allows no cleanup: the guarantee is about the target path, which
    // only ever holds the previous artifact or the complete new one (write, fsync, rename).
    let mut rng = Rng::new(5);
    let ts: Vec<StTensor> = (0..16)
        .map(|i| {
            StTensor::f32(
                &format!("t{i:02}.w"),
                &[256, 4096],
                &dense_weights(&mut rng, 256, 4096, 0.05),
            )
        })
        .collect();
    let f = fixture(
        &ts,
        "name = \"kill\"\n[[tensor]]\nmatch = \"*\"\nformat = \"W8G32_F16S\"\n",
    );
    let out = f.dir.join("out.ninfer");
    std::fs::write(&out, b"previous artifact").unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_ninfer"))
        .args(["convert", s(&f.src), s(&out), "--recipe", s(&f.recipe), "-q"])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let partial_seen = |dir: &Path| {
        std::fs::read_dir(dir)
            .unwrap()
            .any(|e| e.unwrap().file_name().to_string_lossy().ends_with(".partial"))
    };
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    let mut killed_mid_write = false;
    while std::time::Instant::now() < deadline {
        if partial_seen(&f.dir) {
            child.kill().unwrap();
            killed_mid_write = true;
            break;
        }
        if child.try_wait().unwrap().is_some() {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(1));
    }
    let status = child.wait().unwrap();
    assert!(
        killed_mid_write,
        "the conversion finished before it could be killed ({status:?})"
    );
    assert!(!status.success());
    assert_eq!(std::fs::read(&out).unwrap(), b"previous artifact");
    // Without a previous artifact, nothing at all appears at the target.
    let out2 = f.dir.join("fresh.ninfer");
    // Clear the first run's leftover temporary file before starting the second.
    for e in std::fs::read_dir(&f.dir).unwrap() {
        let p = e.unwrap().path();
        if p.to_string_lossy().ends_with(".partial") {
            std::fs::remove_file(p).unwrap();
        }
    }
    let mut child = Command::new(env!("CARGO_BIN_EXE_ninfer"))
        .args(["convert", s(&f.src), s(&out2), "--recipe", s(&f.recipe), "-q"])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let mut killed = false;
    while std::time::Instant::now() < deadline {
        if partial_seen(&f.dir) {
            child.kill().unwrap();
            killed = true;
            break;
        }
        if child.try_wait().unwrap().is_some() {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(1));
    }
    child.wait().unwrap();
    assert!(killed, "the second conversion finished before it could be killed");
    assert!(
        !out2.exists(),
        "a killed conversion left a file at the target path"
    );
}
