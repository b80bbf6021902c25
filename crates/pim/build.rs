//! Compiles the DPU program (`dpu/kernels/main.c`) and the emulator's shim of the UPMEM runtime
//! (`dpu/emulator/shim.c`, `selftest.c`) into one static library with the host's C compiler.
//!
//! The kernel sees the shim's `defs.h`, `mram.h`, ... through `-Idpu/emulator` and
//! `-DPIMHE_EMULATOR`; its `main` is renamed `pimhe_kernel_main` (`dpu/emulator/kernel_entry.c`). The tasklet count is a
//! run-time parameter of the shim (`EmulatorConfig::tasklets`), so one build serves every
//! configuration; `STACK_SIZE_DEFAULT` is the per-tasklet stack the WRAM budget reserves.
//!
//! With the `upmem` feature it also compiles `dpu/host/upmem_host.c`, the bridge to UPMEM's
//! libdpu, against the installed SDK (`UPMEM_HOME`, else `pkg-config dpu`) and links libdpu.

use std::path::PathBuf;

/// Per-tasklet stack in bytes (what `-DSTACK_SIZE_DEFAULT` would be for dpu-upmem-dpurte-clang).
const STACK_SIZE_DEFAULT: u32 = 512;

fn main() {
    let manifest = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR"));
    let dpu = manifest.join("../../dpu").canonicalize().expect("the dpu/ folder sits at the workspace root");
    let include = dpu.join("include");
    let kernels = dpu.join("kernels");
    let emulator = dpu.join("emulator");

    for dir in [&include, &kernels, &emulator] {
        println!("cargo:rerun-if-changed={}", dir.display());
        for entry in std::fs::read_dir(dir).expect("readable dpu folder").flatten() {
            println!("cargo:rerun-if-changed={}", entry.path().display());
        }
    }

    let stack = STACK_SIZE_DEFAULT.to_string();
    let common = |build: &mut cc::Build| {
        build
            .std("c11")
            .opt_level(2)
            .define("PIMHE_EMULATOR", None)
            .define("STACK_SIZE_DEFAULT", stack.as_str())
            .include(&emulator)
            .include(&include)
            .include(&kernels)
            .flag_if_supported("-pthread")
            .flag_if_supported("-fno-common")
            .warnings(true)
            .extra_warnings(true);
    };

    // kernel_entry.c includes dpu/kernels/main.c with `main` renamed, and main.c the kernel
    // families (dpu/kernels/*.h, each a rerun trigger above); one archive, because the kernel and
    // the shim call each other.
    let mut build = cc::Build::new();
    common(&mut build);
    build
        .file(emulator.join("kernel_entry.c"))
        .file(emulator.join("shim.c"))
        .file(emulator.join("tasklets.c"))
        .file(emulator.join("selftest.c"))
        .compile("pimhe_dpu_emulator");

    if std::env::var_os("CARGO_FEATURE_UPMEM").is_some() {
        build_hardware_bridge(&dpu.join("host"));
    }

    // glibc >= 2.34 has pthreads in libc; older ones and other libcs need the library.
    let target_os = std::env::var("CARGO_CFG_TARGET_OS").unwrap_or_default();
    if target_os != "windows" && target_os != "macos" {
        println!("cargo:rustc-link-lib=pthread");
    }
}

/// Compiles the libdpu bridge and links libdpu, or stops the build saying what is missing.
fn build_hardware_bridge(host: &std::path::Path) {
    println!("cargo:rerun-if-env-changed=UPMEM_HOME");
    let (includes, libs) = match std::env::var_os("UPMEM_HOME") {
        Some(home) => {
            let home = PathBuf::from(home);
            (vec![home.join("include/dpu")], vec![home.join("lib")])
        }
        None => {
            let flags = std::process::Command::new("pkg-config")
                .args(["--cflags-only-I", "--libs-only-L", "dpu"])
                .output()
                .ok()
                .filter(|o| o.status.success())
                .unwrap_or_else(|| {
                    panic!(
                        "the `upmem` feature needs UPMEM's SDK: set UPMEM_HOME to its install folder or put \
                         dpu.pc on PKG_CONFIG_PATH (build without the feature to use the emulator)"
                    )
                });
            let text = String::from_utf8_lossy(&flags.stdout).into_owned();
            let paths = |prefix: &str| -> Vec<PathBuf> {
                text.split_whitespace().filter_map(|f| f.strip_prefix(prefix)).map(PathBuf::from).collect()
            };
            (paths("-I"), paths("-L"))
        }
    };
    let mut build = cc::Build::new();
    build.std("c11").opt_level(2).file(host.join("upmem_host.c")).include(host).warnings(true);
    for dir in &includes {
        build.include(dir);
    }
    build.compile("pimhe_upmem_host");
    for dir in &libs {
        println!("cargo:rustc-link-search=native={}", dir.display());
    }
    println!("cargo:rustc-link-lib=dpu");
}
