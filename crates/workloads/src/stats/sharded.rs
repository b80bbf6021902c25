//! The one-process statistics ([`StatsPlan`], `pimhe stats`) with the server's step split over
//! machines (what `python -m pimhe.distributed stats` runs on Ray).
//!
//! The parties are those of `pimhe stats`: the client (here the driver) holds the users' rows
//! and the secret keys, encodes and encrypts, and decrypts the aggregates; the server adds the
//! users' ciphertexts (and their products) up with public material only. Sharded, the driver
//! encrypts one contiguous range of users at a time ([`StatsDriver::encrypt_shard`]), a worker
//! adds a range up into a partial ([`aggregate_rows`]), partials are combined in any tree
//! ([`combine_rows`]), and the driver decrypts the last one ([`StatsDriver::finish`]) into the
//! report `pimhe stats` prints. Aggregates are sums mod t, so the result is the one-process
//! totals exactly, however the users were split.
//!
//! What goes to a worker: [`StatsDriver::public_bytes`] (the run's header: statistic, columns,
//! ring degree, plaintext moduli, user count, and per modulus the relinearization key, which is
//! public; not even the public encryption key, which a server does not need), shards and
//! partials. The secret keys stay in the driver's [`StatsDriver`], which has no method that
//! serializes them.
//!
//! Every partial carries the ranges of users it holds, so a user in two shards is refused when
//! their partials meet, and the driver decrypts only a partial that holds exactly users
//! `0..users`: a lost shard cannot go unnoticed.
//!
//! | object | entries |
//! |---|---|
//! | public | `header` (JSON), `relin/i` per plaintext modulus `i` (where its parameters have special primes) |
//! | shard | `run` (the run's identifier), `rows` (first, end: u64 LE), `i/e`: modulus `i`, encoded vector `e`, a batch of end - first |
//! | partial | `run`, `rows` (sorted disjoint ranges, u64 LE pairs), `i/a`: modulus `i`, aggregate `a`, a batch of one |

use std::ops::Range;
use std::sync::Arc;
use std::time::Instant;

use pimhe_exec::{Backend, CpuBackend};
use pimhe_math::Sampler;
use pimhe_schemes::bfv::BfvContext;
use pimhe_schemes::bgv::BgvContext;
use pimhe_schemes::encoder::{BatchEncoder, ExactScheme};
use pimhe_schemes::rlwe::{CiphertextBatch, Decryptor, Encryptor, PublicKey, RelinKey, RlweScheme, SecretKey};
use pimhe_schemes::serial::{Bundle, SerialScheme};
use serde::{Deserialize, Serialize};

use super::layout::Layout;
use super::scheme::{SchemeStats, StatsServer};
use super::study::Identifier;
use super::{ModulusRun, Statistic, StatsError, StatsPlan, StatsReport};

/// What every worker of a sharded run is told (public).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ShardedHeader {
    /// The run's random identifier: shards and partials of another run are refused.
    pub run: Identifier,
    /// `bgv` or `bfv`.
    pub scheme: String,
    /// Which statistic.
    pub statistic: Statistic,
    /// The columns (linreg: features, then the response).
    pub columns: Vec<String>,
    /// Fixed-point decimals.
    pub decimals: u32,
    /// Ring degree (the scheme's 128-bit preset with each plaintext modulus).
    pub n: usize,
    /// The plan's plaintext moduli, in its order.
    pub plain_moduli: Vec<u32>,
    /// The number of users (rows `0..users`).
    pub users: usize,
}

impl ShardedHeader {
    fn layout(&self) -> Result<Layout, StatsError> {
        Layout::new(self.statistic, &self.columns, self.decimals, self.n)
    }

    fn contexts<S: ExactScheme>(&self) -> Result<Vec<Arc<S>>, StatsError> {
        if self.plain_moduli.is_empty() {
            return Err(StatsError::Input("a sharded run without plaintext moduli".into()));
        }
        Ok(self
            .plain_moduli
            .iter()
            .map(|&t| S::from_params(S::preset_with_plain_modulus(self.n, t)?))
            .collect::<Result<_, _>>()?)
    }

    /// The primes a server backend of this run must hold (those of every plaintext modulus's
    /// parameters; they share the preset's chain).
    pub fn backend_primes(&self) -> Result<Vec<u32>, StatsError> {
        let mut primes: Vec<u32> = Vec::new();
        match self.scheme.as_str() {
            "bgv" => self.contexts::<BgvContext>()?.iter().for_each(|c| primes.extend(c.backend_primes())),
            "bfv" => self.contexts::<BfvContext>()?.iter().for_each(|c| primes.extend(c.backend_primes())),
            other => return Err(StatsError::Input(format!("scheme '{other}'; allowed: bgv, bfv"))),
        }
        let mut seen = std::collections::HashSet::new();
        primes.retain(|p| seen.insert(*p));
        Ok(primes)
    }
}

/// The header of public bytes ([`StatsDriver::public_bytes`]).
pub fn header_of(public: &[u8]) -> Result<ShardedHeader, StatsError> {
    let bundle = Bundle::from_bytes(public)?;
    let text = std::str::from_utf8(bundle.get("header")?)
        .map_err(|_| StatsError::Input("the run's header is not UTF-8".into()))?;
    let header: ShardedHeader =
        serde_json::from_str(text).map_err(|e| StatsError::Input(format!("not a sharded run's header: {e}")))?;
    if header.users == 0 {
        return Err(StatsError::Input("a sharded run of no users".into()));
    }
    Ok(header)
}

/// Per plaintext modulus, the client's keys.
struct ClientKeys<S: ExactScheme> {
    secret: SecretKey<S>,
    public: PublicKey<S>,
    relin: Option<RelinKey<S>>,
}

enum DriverKeys {
    Bgv(Vec<ClientKeys<BgvContext>>),
    Bfv(Vec<ClientKeys<BfvContext>>),
}

/// Runs `$body` with `$keys` the driver's typed keys.
macro_rules! with_keys {
    ($driver:expr, $keys:ident => $body:expr) => {
        match &$driver.keys {
            DriverKeys::Bgv($keys) => $body,
            DriverKeys::Bfv($keys) => $body,
        }
    };
}

/// The client of a sharded run: the plan (the users' rows), the keys (the secret ones never
/// leave it), the encryption randomness, and the time spent encrypting per plaintext modulus.
pub struct StatsDriver {
    plan: StatsPlan,
    header: ShardedHeader,
    client: CpuBackend,
    keys: DriverKeys,
    sampler: Sampler,
    public: Vec<u8>,
    encrypt_s: Vec<f64>,
}

impl StatsDriver {
    /// Keys for every plaintext modulus of `plan` with `scheme` ("bgv", "bfv") at ring degree
    /// `n`, made on the client (`threads` CPU threads) from `sampler`; the noise budget of an
    /// aggregate over all users is checked before any user's data is encrypted (as `pimhe
    /// stats` does).
    pub fn new(
        scheme: &str,
        plan: StatsPlan,
        n: usize,
        threads: Option<usize>,
        mut sampler: Sampler,
    ) -> Result<Self, StatsError> {
        let client = CpuBackend::new(threads).map_err(pimhe_schemes::SchemeError::from)?;
        let header = ShardedHeader {
            run: Identifier::random(&mut sampler),
            scheme: scheme.to_string(),
            statistic: plan.layout.statistic(),
            columns: plan.data().columns().to_vec(),
            decimals: plan.data().decimals(),
            n,
            plain_moduli: plan.plain_moduli().to_vec(),
            users: plan.data().users(),
        };
        if header.users == 0 {
            return Err(StatsError::Input("the dataset has no users".into()));
        }
        let keys = match scheme {
            "bgv" => DriverKeys::Bgv(client_keys(&plan, &header, &client, &mut sampler)?),
            "bfv" => DriverKeys::Bfv(client_keys(&plan, &header, &client, &mut sampler)?),
            other => return Err(StatsError::Input(format!("--scheme {other}: allowed: bgv, bfv"))),
        };
        let mut driver = Self {
            encrypt_s: vec![0.0; header.plain_moduli.len()],
            plan,
            header,
            client,
            keys,
            sampler,
            public: Vec::new(),
        };
        driver.public = with_keys!(driver, keys => public_bytes(&driver.header, keys))?;
        Ok(driver)
    }

    /// The run's public material for the workers: the header and the relinearization keys.
    pub fn public_bytes(&self) -> &[u8] {
        &self.public
    }

    /// The run's header.
    pub fn header(&self) -> &ShardedHeader {
        &self.header
    }

    /// The plan.
    pub fn plan(&self) -> &StatsPlan {
        &self.plan
    }

    /// Whether `bytes` holds a 32-byte window of any of the secret keys' serialized residues
    /// (sampled at 16 places of each key's second half, past its header): an audit of what was
    /// shipped, which tells only yes or no.
    pub fn contains_secret(&self, bytes: &[u8]) -> bool {
        let keys: Vec<Vec<u8>> = with_keys!(self, keys => keys.iter().map(|k| k.secret.to_bytes()).collect());
        keys.iter().any(|key| {
            let step = (key.len() / 32).max(1);
            (key.len() / 2..key.len().saturating_sub(32)).step_by(step).any(|at| {
                let window = &key[at..at + 32];
                bytes.windows(32).any(|w| w == window)
            })
        })
    }

    /// The users `rows` (a range within `0..users`), encoded and encrypted under every
    /// plaintext modulus, as a shard's bytes.
    pub fn encrypt_shard(&mut self, rows: Range<usize>) -> Result<Vec<u8>, StatsError> {
        if rows.is_empty() || rows.end > self.header.users {
            return Err(StatsError::Input(format!(
                "users {}..{}: a shard is a non-empty range within 0..{}",
                rows.start, rows.end, self.header.users
            )));
        }
        let mut bundle = Bundle::new();
        bundle.push("run", self.header.run.as_bytes().to_vec())?;
        bundle.push("rows", ranges_bytes(&[(rows.start as u64, rows.end as u64)]))?;
        let (plan, client, sampler, times) = (&self.plan, &self.client, &mut self.sampler, &mut self.encrypt_s);
        with_keys!(self, keys => {
            for (i, (key, &t)) in keys.iter().zip(&self.header.plain_moduli).enumerate() {
                let start = Instant::now();
                let encoder = BatchEncoder::new(key.public.context());
                let mut encryptor = Encryptor::with_public_key(client, &key.public)?.with_sampler(sampler.fork());
                for (e, &encoding) in plan.layout.encodings().iter().enumerate() {
                    let plains = plan.data().rows()[rows.clone()]
                        .iter()
                        .map(|row| encoder.encode(&plan.layout.encode_mod(encoding, row, t)))
                        .collect::<Result<Vec<_>, _>>()?;
                    bundle.push(format!("{i}/{e}"), encryptor.encrypt(&plains)?.to_bytes(client)?)?;
                }
                times[i] += start.elapsed().as_secs_f64();
            }
        });
        Ok(bundle.to_bytes())
    }

    /// Decrypts the last partial (which must hold exactly users `0..users`) into the report
    /// `pimhe stats` prints; `server_s` is the distributed server's wall time, reported split
    /// evenly over the plaintext moduli (their sum is the wall time).
    pub fn finish(&self, partial: &[u8], server_s: f64) -> Result<StatsReport, StatsError> {
        let moduli = self.header.plain_moduli.len();
        let runs = with_keys!(self, keys => {
            let contexts: Vec<_> = keys.iter().map(|k| k.public.context().clone()).collect();
            let loaded = load_partial(&self.client, &self.header, &contexts, partial)?;
            if loaded.rows != [(0, self.header.users as u64)] {
                return Err(StatsError::Integrity(format!(
                    "the combined partial holds users {} where 0..{} were sharded: nothing is decrypted",
                    show_ranges(&loaded.rows),
                    self.header.users
                )));
            }
            keys.iter()
                .zip(&loaded.ciphertexts)
                .zip(&self.header.plain_moduli)
                .zip(&self.encrypt_s)
                .map(|(((key, aggregates), &t), &client_encrypt_s)| {
                    let start = Instant::now();
                    let decryptor = Decryptor::new(&self.client, &key.secret)?;
                    let encoder = BatchEncoder::new(key.public.context());
                    let mut noise_budget_bits = u32::MAX;
                    let mut sums = Vec::with_capacity(aggregates.len());
                    for aggregate in aggregates {
                        noise_budget_bits = noise_budget_bits.min(decryptor.noise_budget(aggregate)?[0]);
                        let mut slots = encoder.decode(&decryptor.decrypt(aggregate)?[0])?;
                        slots.truncate(self.plan.layout.slots());
                        sums.push(slots);
                    }
                    Ok(ModulusRun {
                        plain_modulus: t,
                        sums,
                        client_encrypt_s,
                        server_s: server_s / moduli as f64,
                        client_decrypt_s: start.elapsed().as_secs_f64(),
                        noise_budget_bits,
                    })
                })
                .collect::<Result<Vec<_>, StatsError>>()?
        });
        self.plan.finish(runs)
    }
}

fn client_keys<S: ExactScheme>(
    plan: &StatsPlan,
    header: &ShardedHeader,
    client: &CpuBackend,
    sampler: &mut Sampler,
) -> Result<Vec<ClientKeys<S>>, StatsError> {
    header
        .contexts::<S>()?
        .into_iter()
        .map(|ctx| {
            let mut scheme = SchemeStats::<S, _, _>::with_context(client, client, ctx, sampler.fork())?;
            plan.check_noise_budget(&mut scheme)?;
            let (secret, public, relin) = scheme.into_keys();
            Ok(ClientKeys { secret, public, relin })
        })
        .collect()
}

fn public_bytes<S: ExactScheme + SerialScheme>(
    header: &ShardedHeader,
    keys: &[ClientKeys<S>],
) -> Result<Vec<u8>, StatsError> {
    let mut bundle = Bundle::new();
    let json = serde_json::to_string(header).map_err(|e| StatsError::Input(e.to_string()))?;
    bundle.push("header", json.into_bytes())?;
    for (i, key) in keys.iter().enumerate() {
        if let Some(relin) = &key.relin {
            bundle.push(format!("relin/{i}"), relin.to_compressed_bytes().unwrap_or_else(|_| relin.to_bytes()))?;
        }
    }
    Ok(bundle.to_bytes())
}

/// A worker's view of the public bytes: the header, the contexts and the relinearization keys.
struct ServerKeys<S: ExactScheme> {
    header: ShardedHeader,
    layout: Layout,
    contexts: Vec<Arc<S>>,
    relin: Vec<Option<RelinKey<S>>>,
}

fn server_keys<S: ExactScheme + SerialScheme>(public: &[u8]) -> Result<ServerKeys<S>, StatsError> {
    let header = header_of(public)?;
    let bundle = Bundle::from_bytes(public)?;
    let layout = header.layout()?;
    let contexts = header.contexts::<S>()?;
    let relin = contexts
        .iter()
        .enumerate()
        .map(|(i, ctx)| {
            let name = format!("relin/{i}");
            match bundle.names().any(|n| n == name) {
                true => Ok(Some(RelinKey::from_bytes(ctx, bundle.get(&name)?)?)),
                false if ctx.rlwe().params().special_primes().is_empty() => Ok(None),
                false => Err(StatsError::Input(format!("the public bytes lack {name}"))),
            }
        })
        .collect::<Result<Vec<_>, StatsError>>()?;
    Ok(ServerKeys { header, layout, contexts, relin })
}

/// Aggregates with the users they hold.
struct Loaded<B: Backend, S: RlweScheme> {
    rows: Vec<(u64, u64)>,
    /// `ciphertexts[modulus][aggregate or encoding]`.
    ciphertexts: Vec<Vec<CiphertextBatch<B, S>>>,
}

/// Runs `$body` with `$S` the scheme type the public bytes' header names.
macro_rules! with_header_scheme {
    ($public:expr, $S:ident => $body:expr) => {
        match header_of($public)?.scheme.as_str() {
            "bgv" => {
                type $S = BgvContext;
                $body
            }
            "bfv" => {
                type $S = BfvContext;
                $body
            }
            other => Err(StatsError::Input(format!("scheme '{other}'; allowed: bgv, bfv"))),
        }
    };
}

/// A worker's shard: the partial (bytes) of the users of `shard` ([`StatsDriver::encrypt_shard`])
/// on `backend`, with the run's `public` bytes.
pub fn aggregate_rows<B: Backend>(backend: &B, public: &[u8], shard: &[u8]) -> Result<Vec<u8>, StatsError> {
    Ok(aggregate_shard(backend, public, shard)?.partial)
}

/// What [`aggregate_shard`] made: the partial and how long its aggregation alone took.
#[derive(Debug, Clone)]
pub struct ShardAggregate {
    /// The partial's bytes, as [`aggregate_rows`] returns them.
    pub partial: Vec<u8>,
    /// Wall seconds of the server's arithmetic alone (the sums and products over the shard's
    /// users), without reading the shard or writing the partial: the server's compute, which a
    /// benchmark compares with another backend's.
    pub aggregate_s: f64,
}

/// [`aggregate_rows`], with the time of its aggregation step measured apart from the
/// (de)serialization around it.
pub fn aggregate_shard<B: Backend>(backend: &B, public: &[u8], shard: &[u8]) -> Result<ShardAggregate, StatsError> {
    with_header_scheme!(public, S => {
        let keys = server_keys::<S>(public)?;
        let encodings = keys.layout.encodings().len();
        let loaded = load(backend, &keys.header, &keys.contexts, shard, encodings)?;
        let [(first, end)] = loaded.rows[..] else {
            return Err(StatsError::Input("a shard holds one range of users".into()));
        };
        let users = (end - first) as usize;
        if let Some(bad) = loaded.ciphertexts.iter().flatten().find(|b| b.count() != users) {
            return Err(StatsError::Input(format!(
                "a shard of users {first}..{end} holds a batch of {} ciphertexts",
                bad.count()
            )));
        }
        let start = Instant::now();
        let aggregates = keys
            .contexts
            .iter()
            .zip(&keys.relin)
            .zip(&loaded.ciphertexts)
            .map(|((ctx, relin), batches)| {
                keys.layout.aggregate(&StatsServer::<S, B>::new(backend, ctx, relin.as_ref()), batches, None)
            })
            .collect::<Result<Vec<_>, _>>()?;
        let aggregate_s = start.elapsed().as_secs_f64();
        Ok(ShardAggregate { partial: partial_bytes(backend, &keys.header, &loaded.rows, &aggregates)?, aggregate_s })
    })
}

/// A tree reduction's step: the partial (bytes) of every user of `partials`, refused if two
/// hold the same user (naming the users) or come from another run.
pub fn combine_rows<B: Backend>(backend: &B, public: &[u8], partials: &[&[u8]]) -> Result<Vec<u8>, StatsError> {
    with_header_scheme!(public, S => {
        let keys = server_keys::<S>(public)?;
        let mut partials = partials.iter();
        let first = partials.next().ok_or_else(|| StatsError::Input("no partials to combine".into()))?;
        let mut combined = load_partial(backend, &keys.header, &keys.contexts, first)?;
        for next in partials {
            let next = load_partial(backend, &keys.header, &keys.contexts, next)?;
            combined.rows = merge_ranges(&combined.rows, &next.rows)?;
            combined.ciphertexts = keys
                .contexts
                .iter()
                .zip(&keys.relin)
                .zip(combined.ciphertexts.iter().zip(&next.ciphertexts))
                .map(|((ctx, relin), (a, b))| {
                    let server = StatsServer::<S, B>::new(backend, ctx, relin.as_ref());
                    a.iter().zip(b).map(|(a, b)| super::Aggregator::add(&server, a, b)).collect::<Result<Vec<_>, _>>()
                })
                .collect::<Result<Vec<_>, _>>()?;
        }
        partial_bytes(backend, &keys.header, &combined.rows, &combined.ciphertexts)
    })
}

fn partial_bytes<B: Backend, S: SerialScheme>(
    backend: &B,
    header: &ShardedHeader,
    rows: &[(u64, u64)],
    aggregates: &[Vec<CiphertextBatch<B, S>>],
) -> Result<Vec<u8>, StatsError> {
    let mut bundle = Bundle::new();
    bundle.push("run", header.run.as_bytes().to_vec())?;
    bundle.push("rows", ranges_bytes(rows))?;
    for (i, per_modulus) in aggregates.iter().enumerate() {
        for (a, batch) in per_modulus.iter().enumerate() {
            bundle.push(format!("{i}/{a}"), batch.to_bytes(backend)?)?;
        }
    }
    Ok(bundle.to_bytes())
}

fn load_partial<B: Backend, S: ExactScheme + SerialScheme>(
    backend: &B,
    header: &ShardedHeader,
    contexts: &[Arc<S>],
    bytes: &[u8],
) -> Result<Loaded<B, S>, StatsError> {
    let aggregates = header.layout()?.aggregates().len();
    let loaded = load(backend, header, contexts, bytes, aggregates)?;
    if let Some(bad) = loaded.ciphertexts.iter().flatten().find(|b| b.count() != 1) {
        return Err(StatsError::Input(format!(
            "a partial's aggregate holds {} ciphertexts; one is expected",
            bad.count()
        )));
    }
    Ok(loaded)
}

/// The ranges and `per_modulus` batches `i/j` of a shard or partial of this run.
fn load<B: Backend, S: ExactScheme + SerialScheme>(
    backend: &B,
    header: &ShardedHeader,
    contexts: &[Arc<S>],
    bytes: &[u8],
    per_modulus: usize,
) -> Result<Loaded<B, S>, StatsError> {
    let bundle = Bundle::from_bytes(bytes)?;
    if Identifier::from_bytes(bundle.get("run")?) != Some(header.run) {
        return Err(StatsError::Input("a shard or partial of another run: refused".into()));
    }
    let rows = parse_ranges(bundle.get("rows")?, header.users)?;
    let expected = 2 + contexts.len() * per_modulus;
    if bundle.names().count() != expected {
        return Err(StatsError::Input(format!(
            "a shard or partial of {} entries; this run's have {expected}",
            bundle.names().count()
        )));
    }
    let ciphertexts = contexts
        .iter()
        .enumerate()
        .map(|(i, ctx)| {
            (0..per_modulus)
                .map(|j| Ok(CiphertextBatch::from_bytes(backend, ctx, bundle.get(&format!("{i}/{j}"))?)?))
                .collect::<Result<Vec<_>, StatsError>>()
        })
        .collect::<Result<Vec<_>, _>>()?;
    Ok(Loaded { rows, ciphertexts })
}

fn ranges_bytes(ranges: &[(u64, u64)]) -> Vec<u8> {
    ranges.iter().flat_map(|&(a, b)| a.to_le_bytes().into_iter().chain(b.to_le_bytes())).collect()
}

/// Sorted, disjoint, non-empty, non-adjacent ranges within `0..users`.
fn parse_ranges(bytes: &[u8], users: usize) -> Result<Vec<(u64, u64)>, StatsError> {
    if bytes.is_empty() || !bytes.len().is_multiple_of(16) {
        return Err(StatsError::Input(format!("a rows entry of {} bytes is not a list of ranges", bytes.len())));
    }
    let word = |c: &[u8]| u64::from_le_bytes(c.try_into().expect("8 bytes"));
    let ranges: Vec<(u64, u64)> = bytes.chunks(16).map(|c| (word(&c[..8]), word(&c[8..]))).collect();
    let ordered = ranges.iter().all(|&(a, b)| a < b && b <= users as u64) && ranges.windows(2).all(|w| w[0].1 < w[1].0);
    if !ordered {
        return Err(StatsError::Input(format!(
            "users {} are not sorted disjoint ranges within 0..{users}",
            show_ranges(&ranges)
        )));
    }
    Ok(ranges)
}

/// The union of two range lists, refused if they share a user.
fn merge_ranges(a: &[(u64, u64)], b: &[(u64, u64)]) -> Result<Vec<(u64, u64)>, StatsError> {
    let mut all: Vec<(u64, u64)> = a.iter().chain(b).copied().collect();
    all.sort_unstable();
    let mut merged: Vec<(u64, u64)> = Vec::with_capacity(all.len());
    for (start, end) in all {
        match merged.last_mut() {
            Some(last) if start < last.1 => {
                return Err(StatsError::Input(format!(
                    "users {}..{} are in two shards: each user is counted once",
                    start,
                    end.min(last.1)
                )))
            }
            Some(last) if start == last.1 => last.1 = end,
            _ => merged.push((start, end)),
        }
    }
    Ok(merged)
}

fn show_ranges(ranges: &[(u64, u64)]) -> String {
    let parts: Vec<String> = ranges.iter().map(|(a, b)| format!("{a}..{b}")).collect();
    parts.join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::Dataset;

    fn plan(users: usize) -> StatsPlan {
        let data = Dataset::synthetic(users, 7, &["x1", "y"]).unwrap();
        StatsPlan::new(Statistic::Linreg, data, 8192, BgvContext::max_plain_bits(8192).unwrap()).unwrap()
    }

    #[test]
    fn ranges_merge_and_refuse_overlaps() {
        assert_eq!(merge_ranges(&[(0, 3)], &[(3, 5), (7, 9)]).unwrap(), vec![(0, 5), (7, 9)]);
        let message = merge_ranges(&[(0, 4)], &[(3, 5)]).unwrap_err().to_string();
        assert!(message.contains("users 3..4 are in two shards"), "{message}");
        assert!(parse_ranges(&ranges_bytes(&[(2, 1)]), 5).is_err());
        assert!(parse_ranges(&ranges_bytes(&[(0, 6)]), 5).is_err());
    }

    #[test]
    fn sharded_totals_equal_the_one_process_ones_in_any_tree() {
        let users = 11;
        let cpu = CpuBackend::new(Some(1)).unwrap();
        let expected = {
            let plan = plan(users);
            let mut schemes = plan
                .plain_moduli()
                .iter()
                .map(|&t| {
                    let ctx = BgvContext::from_params(BgvContext::preset_with_plain_modulus(8192, t)?)?;
                    SchemeStats::<BgvContext, _, _>::with_context(&cpu, &cpu, ctx, Sampler::from_seed_u64(u64::from(t)))
                })
                .collect::<Result<Vec<_>, _>>()
                .unwrap();
            plan.execute(&mut schemes).unwrap()
        };
        let mut driver = StatsDriver::new("bgv", plan(users), 8192, Some(1), Sampler::from_seed_u64(2)).unwrap();
        let public = driver.public_bytes().to_vec();
        // Shards of 4, 4 and 3 users (3 does not divide 11), combined as ((0 + 2) + 1).
        let parts: Vec<Vec<u8>> = [0..4, 4..8, 8..11]
            .into_iter()
            .map(|rows| aggregate_rows(&cpu, &public, &driver.encrypt_shard(rows).unwrap()).unwrap())
            .collect();
        let left = combine_rows(&cpu, &public, &[&parts[0], &parts[2]]).unwrap();
        // Refused before it is decrypted: the partial lacks users 4..8.
        let message = driver.finish(&left, 0.0).unwrap_err().to_string();
        assert!(message.contains("users 0..4, 8..11 where 0..11"), "{message}");
        // A user counted twice is refused when the partials meet.
        let message = combine_rows(&cpu, &public, &[&left, &parts[0]]).unwrap_err().to_string();
        assert!(message.contains("in two shards"), "{message}");
        let all = combine_rows(&cpu, &public, &[&left, &parts[1]]).unwrap();
        let report = driver.finish(&all, 0.0).unwrap();
        assert!(report.aggregates_exact);
        let values = |r: &StatsReport| r.estimates.iter().map(|e| (e.name.clone(), e.encrypted)).collect::<Vec<_>>();
        assert_eq!(values(&report), values(&expected));
        // The secret key is in no byte a worker sees (and the scan finds it where it is).
        let secret: Vec<u8> = with_keys!(driver, keys => keys[0].secret.to_bytes());
        assert!(driver.contains_secret(&[b"framing".as_slice(), &secret].concat()));
        for bytes in [&public, &parts[0], &all] {
            assert!(!driver.contains_secret(bytes));
        }
        // Another run's shard is refused.
        let other = StatsDriver::new("bgv", plan(users), 8192, Some(1), Sampler::from_seed_u64(3)).unwrap();
        let message = aggregate_rows(&cpu, other.public_bytes(), &driver.encrypt_shard(0..2).unwrap()).unwrap_err();
        assert!(message.to_string().contains("another run"), "{message}");
    }
}
