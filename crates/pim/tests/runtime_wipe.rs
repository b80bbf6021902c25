//! Wiping device buffers (secrets) must not abort the process and must not leave the secret
//! readable, even when the DPUs stop working: `zeroize` runs from `Drop`.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use pimhe_exec::Backend;
use pimhe_pim::device::{DeviceError, DpuDevice, LaunchCost};
use pimhe_pim::emulator::{DpuSet, EmulatorConfig, EmulatorError};
use pimhe_pim::runtime::placement::Mode;
use pimhe_pim::runtime::{PimBackend, PimConfig};
use pimhe_ring::{Representation, RingBasis};
use pimhe_testkit::inputs::{distinct_primes, random_batch, rng};

const N: usize = 256;

/// Emulated DPUs whose launches, and then writes, can be made to fail; the MRAM stays
/// readable by the test through `mram`.
struct Failing {
    mram: Arc<Mutex<DpuSet>>,
    launches_fail: Arc<AtomicBool>,
    writes_fail: Arc<AtomicBool>,
}

fn refused(dpu: usize) -> DeviceError {
    DeviceError::Emulator(EmulatorError::NoSuchDpu { dpu, len: 0 })
}

impl DpuDevice for Failing {
    fn len(&self) -> usize {
        self.mram.lock().unwrap().len()
    }

    fn measures_time(&self) -> bool {
        false
    }

    fn write(&mut self, dpu: usize, offset: usize, bytes: &[u8]) -> Result<(), DeviceError> {
        if self.writes_fail.load(Ordering::SeqCst) {
            return Err(refused(dpu));
        }
        Ok(self.mram.lock().unwrap().write(dpu, offset, bytes)?)
    }

    fn read(&mut self, dpu: usize, offset: usize, out: &mut [u8]) -> Result<(), DeviceError> {
        Ok(self.mram.lock().unwrap().read(dpu, offset, out)?)
    }

    fn launch(&mut self, dpus: &[usize]) -> Result<LaunchCost, DeviceError> {
        if self.launches_fail.load(Ordering::SeqCst) {
            return Err(refused(dpus[0]));
        }
        Ok(LaunchCost::Counted(self.mram.lock().unwrap().launch(dpus)?))
    }
}

struct Setup {
    backend: PimBackend,
    mram: Arc<Mutex<DpuSet>>,
    launches_fail: Arc<AtomicBool>,
    writes_fail: Arc<AtomicBool>,
}

fn setup() -> Setup {
    setup_with(EmulatorConfig::default())
}

fn setup_with(emulator: EmulatorConfig) -> Setup {
    let primes = distinct_primes(N, &[30, 29]);
    let mut config = PimConfig::new(2, Mode::Parallel);
    config.emulator = emulator.clone();
    let mram = Arc::new(Mutex::new(DpuSet::new(2, emulator).unwrap()));
    let (launches_fail, writes_fail) = (Arc::new(AtomicBool::new(false)), Arc::new(AtomicBool::new(false)));
    let device = Failing { mram: mram.clone(), launches_fail: launches_fail.clone(), writes_fail: writes_fail.clone() };
    let backend = PimBackend::with_device(config, Box::new(device), N, &primes).unwrap();
    Setup { backend, mram, launches_fail, writes_fail }
}

/// How many of the secret's residues (nonzero words) each DPU's MRAM still holds.
fn secret_words_left(mram: &Mutex<DpuSet>, secret: &[u32]) -> usize {
    let set = mram.lock().unwrap();
    (0..set.len())
        .map(|dpu| {
            let mut bytes = vec![0u8; set.resident_bytes(dpu).unwrap() / 8 * 8];
            set.read(dpu, 0, &mut bytes).unwrap();
            let words: Vec<u32> = bytes.chunks_exact(4).map(|c| u32::from_le_bytes(c.try_into().unwrap())).collect();
            // A run of 8 of the secret's consecutive words found in MRAM: it is still there.
            secret.chunks_exact(8).filter(|w| words.windows(8).any(|m| m == *w)).count()
        })
        .sum()
}

#[test]
fn a_failed_wiping_launch_falls_back_to_overwriting_the_mram() {
    let s = setup();
    let secret = random_batch(&mut rng(1), &s.backend_basis(), 3, Representation::Ntt);
    let words = secret.limb(0).to_vec();
    let mut buffer = s.backend.upload(secret).unwrap();
    assert!(secret_words_left(&s.mram, &words) > 0, "the upload put the secret in MRAM");
    s.launches_fail.store(true, Ordering::SeqCst);
    s.backend.zeroize(&mut buffer);
    assert_eq!(secret_words_left(&s.mram, &words), 0, "no launch, yet the MRAM is wiped");
}

#[test]
fn when_nothing_reaches_the_dpus_the_mram_is_never_reused_and_nothing_panics() {
    let s = setup();
    let basis = s.backend_basis();
    let secret = random_batch(&mut rng(2), &basis, 3, Representation::Ntt);
    let words = secret.limb(0).to_vec();
    let mut buffer = s.backend.upload(secret).unwrap();
    let free_before = s.backend.mram_free_bytes();
    s.launches_fail.store(true, Ordering::SeqCst);
    s.writes_fail.store(true, Ordering::SeqCst);
    s.backend.zeroize(&mut buffer);
    drop(buffer);
    // The secret could not be wiped, so its MRAM stays allocated: no later upload lands on it
    // (and could read it back through a partial write).
    assert_eq!(s.backend.mram_free_bytes(), free_before);
    assert!(secret_words_left(&s.mram, &words) > 0);
}

#[test]
fn an_evicted_secret_leaves_no_copy_in_mram_and_zeroizing_it_wipes_its_host_copy() {
    // Room for two buffers of 3 polynomials beside the tables.
    let roomy = setup();
    let overhead = EmulatorConfig::default().mram_bytes - roomy.backend.mram_free_bytes();
    let s = setup_with(EmulatorConfig { mram_bytes: overhead + 2 * 3 * N * 4, ..EmulatorConfig::default() });
    let basis = s.backend_basis();
    let secret = random_batch(&mut rng(3), &basis, 3, Representation::Ntt);
    let words = secret.limb(0).to_vec();
    let mut buffer = s.backend.upload(secret.clone()).unwrap();
    // The third buffer, of one polynomial, evicts the secret and overwrites a third of it.
    let others = [(4, 3), (5, 1)]
        .map(|(seed, count)| s.backend.upload(random_batch(&mut rng(seed), &basis, count, Representation::Ntt)));
    assert_eq!(s.backend.report().unwrap().evictions, 1, "the third buffer evicted the secret");
    assert_eq!(secret_words_left(&s.mram, &words), 0, "the MRAM the secret left was zeroed");
    assert_eq!(s.backend.download(&buffer).unwrap(), secret, "its host copy");
    s.backend.zeroize(&mut buffer);
    assert!(s.backend.download(&buffer).unwrap().data().iter().all(|&x| x == 0), "the host copy is wiped");
    assert_eq!(secret_words_left(&s.mram, &words), 0);
    drop(others);
}

impl Setup {
    fn backend_basis(&self) -> Arc<RingBasis> {
        RingBasis::new(N, &distinct_primes(N, &[30, 29])).unwrap()
    }
}
