//! Builds the real C11 and C++17 consumers (`tests/c/consumer.c`, `tests/c/consumer.cpp`) and the
//! host build of the CUDA decode header (`tests/c/cuda_decode_host.cpp`) against the static
//! library cargo just built, with `-Wall -Wextra -Werror -pedantic`, and runs them.
//!
//! The static library is found next to this test's executable: cargo places integration-test
//! binaries and the `libninfer_ffi.a` built for the same run in `<target>/<profile>/deps/`, so
//! the lookup follows `CARGO_TARGET_DIR`, `--target` and `--profile` without configuration.
//! The compilers are `$CC` / `$CXX` when set, else `cc` / `c++`. Linux link flags.

use std::path::{Path, PathBuf};
use std::process::Command;

fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn staticlib() -> PathBuf {
    let exe = std::env::current_exe().expect("test executable path");
    // `cargo test` writes the library it built for this run into `deps/` (next to this
    // executable) and does not always uplift it to `<profile>/`: the uplifted copy may be stale.
    let deps = exe.parent().expect("<target>/<profile>/deps/<test>");
    let lib = deps.join("libninfer_ffi.a");
    assert!(lib.is_file(), "static library not found at {}", lib.display());
    lib
}

fn out_dir() -> PathBuf {
    let d = Path::new(env!("CARGO_TARGET_TMPDIR")).join("c-consumers");
    std::fs::create_dir_all(&d).unwrap();
    d
}

const LINK: [&str; 3] = ["-lpthread", "-ldl", "-lm"];

/// Compile `source` with `compiler` and `flags`, link the static library, run it, and return its
/// stdout. Panics with the compiler or program output on failure.
fn build_and_run(compiler_env: &str, default: &str, flags: &[&str], source: &str, exe: &str) -> String {
    let compiler = std::env::var(compiler_env).unwrap_or_else(|_| default.to_string());
    let root = repo_root();
    let bin = out_dir().join(exe);
    let out = Command::new(&compiler)
        .args(flags)
        .args(["-Wall", "-Wextra", "-Werror", "-pedantic", "-O1"])
        .arg(format!("-I{}", root.join("include").display()))
        .arg(format!("-I{}", root.join("ffi/cuda").display()))
        .arg(format!("-I{}", root.join("tests/c").display()))
        .arg(root.join(source))
        .arg("-x")
        .arg("none")
        .arg(staticlib())
        .args(LINK)
        .arg("-o")
        .arg(&bin)
        .output()
        .unwrap_or_else(|e| panic!("cannot run {compiler}: {e}"));
    assert!(
        out.status.success(),
        "{compiler} failed on {source}:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let run = Command::new(&bin).output().expect("run consumer");
    let stdout = String::from_utf8_lossy(&run.stdout).into_owned();
    assert!(
        run.status.success(),
        "{exe} failed ({}):\n{stdout}\n{}",
        run.status,
        String::from_utf8_lossy(&run.stderr)
    );
    println!("{stdout}");
    stdout
}

#[test]
fn c11_consumer_calls_every_function_and_error_path() {
    let out = build_and_run(
        "CC",
        "cc",
        &["-std=c11", "-x", "c"],
        "tests/c/consumer.c",
        "consumer_c",
    );
    assert!(out.contains("0 failures"), "{out}");
}

#[test]
fn cpp17_consumer_calls_every_function_and_error_path() {
    let out = build_and_run(
        "CXX",
        "c++",
        &["-std=c++17", "-x", "c++"],
        "tests/c/consumer.cpp",
        "consumer_cpp",
    );
    assert!(
        out.contains("0 failures") && out.contains("extra checks passed"),
        "{out}"
    );
}

#[test]
fn cuda_decode_header_matches_the_rust_oracle_on_every_word() {
    let out = build_and_run(
        "CXX",
        "c++",
        &["-std=c++17", "-x", "c++"],
        "tests/c/cuda_decode_host.cpp",
        "cuda_decode_host",
    );
    assert!(out.contains(" 0 failures"), "{out}");
}
