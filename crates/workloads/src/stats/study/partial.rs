//! The server's step split over machines (what `pimhe.distributed` runs on Ray): each shard of
//! the submissions is added up on its own into a [`Partial`], and partials are combined, in any
//! order and any tree, into the aggregates of all the submissions, which `pimhe decrypt` reads
//! as it reads those of the one-process [`Study::aggregate`].
//!
//! A partial carries the identifiers of the submissions it holds, so that the one-process
//! checks hold across shards: a submission in two partials is refused when they meet, no
//! combination passes the study's most users, and the final count must be the number of
//! submissions the caller sharded. Aggregates are sums (of values and of products), so the
//! combined aggregates decrypt to exactly the one-process totals however the submissions were
//! split.
//!
//! The functions on bytes are a worker's steps: the study, the public keys and the submissions
//! arrive as bytes (from Ray's object store: no file, no secret), and a partial goes back as
//! bytes ([`Partial::to_bytes`]: the aggregates' bundle plus a `submissions` entry, the sorted
//! 16-byte identifiers).

use std::collections::HashMap;
use std::path::Path;

use pimhe_exec::Backend;
use pimhe_schemes::encoder::ExactScheme;
use pimhe_schemes::rlwe::{CiphertextBatch, RlweScheme};
use pimhe_schemes::serial::{Access, Bundle, SerialScheme};

use super::directory::write;
use super::{Aggregates, Identifier, Overwrite, Study, StudyKeys, Submission};
use crate::stats::scheme::{Aggregator, StatsServer};
use crate::stats::StatsError;

/// The aggregates of some of a study's submissions, with the identifiers of those submissions.
pub struct Partial<B: Backend, C: RlweScheme> {
    /// Their aggregates, with `users` the number of submissions.
    pub aggregates: Aggregates<B, C>,
    /// The identifiers of the submissions added up, sorted, each once.
    pub submissions: Vec<Identifier>,
}

impl Study {
    /// [`Study::aggregate`] of one shard of the submissions (with all its checks), kept with the
    /// submissions' identifiers for [`Study::combine`].
    pub fn aggregate_partial<S: ExactScheme, B: Backend>(
        &self,
        backend: &B,
        keys: &StudyKeys<S>,
        submissions: &[Submission<B, S>],
    ) -> Result<Partial<B, S>, StatsError> {
        let aggregates = self.aggregate::<S, B>(backend, keys, submissions)?;
        let mut ids: Vec<Identifier> = submissions.iter().map(|s| s.id).collect();
        ids.sort_unstable();
        Ok(Partial { aggregates, submissions: ids })
    }

    /// The partial of every submission of `partials`: refused if two of them hold the same
    /// submission (naming it), if together they pass [`Study::max_users`], or if one's user
    /// count is not its number of identifiers.
    pub fn combine<S: ExactScheme, B: Backend>(
        &self,
        backend: &B,
        keys: &StudyKeys<S>,
        partials: Vec<Partial<B, S>>,
    ) -> Result<Partial<B, S>, StatsError> {
        self.check_keys(keys.relin.len(), "relinearization keys")?;
        let mut partials = partials.into_iter().enumerate();
        let Some((_, mut combined)) = partials.next() else {
            return Err(StatsError::Input("no partial aggregates to combine".into()));
        };
        self.check_partial(&combined, 0)?;
        for (index, next) in partials {
            self.check_partial(&next, index)?;
            // Duplicates first: a submission counted twice is the more telling refusal.
            let submissions = merge_disjoint(&combined.submissions, &next.submissions)?;
            let users = combined.aggregates.users + next.aggregates.users;
            if users > self.max_users {
                return Err(StatsError::Capacity(format!(
                    "the partial aggregates hold {users} submissions together, more than the {} users the study \
                     declares: its plaintext moduli hold no more exactly",
                    self.max_users
                )));
            }
            let ciphertexts = keys
                .public
                .iter()
                .zip(&keys.relin)
                .zip(combined.aggregates.ciphertexts.iter().zip(&next.aggregates.ciphertexts))
                .map(|((public, relin), (a, b))| {
                    let server = StatsServer::<S, B>::new(backend, public.context(), relin.as_ref());
                    a.iter().zip(b).map(|(a, b)| server.add(a, b)).collect::<Result<Vec<CiphertextBatch<B, S>>, _>>()
                })
                .collect::<Result<Vec<_>, _>>()?;
            combined = Partial { aggregates: Aggregates { study: self.id, users, ciphertexts }, submissions };
        }
        Ok(combined)
    }

    /// A partial from [`Partial::to_bytes`], onto `backend`, in the contexts of `keys`:
    /// refused if it is another study's, or its identifiers are unsorted, repeated or not as
    /// many as its users.
    pub fn partial_from_bytes<B: Backend, C: SerialScheme>(
        &self,
        backend: &B,
        keys: &StudyKeys<C>,
        bytes: &[u8],
    ) -> Result<Partial<B, C>, StatsError> {
        let bundle = Bundle::from_bytes(bytes)?;
        let aggregates = self.aggregates_from_bundle(backend, keys, &bundle, 1)?;
        let list = bundle.get("submissions")?;
        if list.len() % Identifier::LEN != 0 {
            return Err(StatsError::Input(format!(
                "a partial's submissions entry of {} bytes is not a list of {}-byte identifiers",
                list.len(),
                Identifier::LEN
            )));
        }
        let submissions: Vec<Identifier> = list.chunks(Identifier::LEN).filter_map(Identifier::from_bytes).collect();
        if submissions.windows(2).any(|w| w[0] >= w[1]) {
            return Err(StatsError::Input("a partial's submission identifiers are unsorted or repeated".into()));
        }
        let partial = Partial { aggregates, submissions };
        self.check_partial(&partial, 0)?;
        Ok(partial)
    }

    /// Errors unless partial `index` is this study's and counts one user per identifier.
    fn check_partial<B: Backend, C: RlweScheme>(
        &self,
        partial: &Partial<B, C>,
        index: usize,
    ) -> Result<(), StatsError> {
        self.expect_study(partial.aggregates.study, &format!("partial aggregate {index}"))?;
        if partial.aggregates.users != partial.submissions.len() {
            return Err(StatsError::Input(format!(
                "partial aggregate {index} claims {} users but lists {} submissions",
                partial.aggregates.users,
                partial.submissions.len()
            )));
        }
        Ok(())
    }
}

impl<B: Backend, C: SerialScheme> Partial<B, C> {
    /// The partial as a bundle: the aggregates' entries and the identifiers (downloaded from
    /// `backend`).
    pub fn to_bytes(&self, backend: &B) -> Result<Vec<u8>, StatsError> {
        let ids = self.submissions.iter().flat_map(|id| id.as_bytes().iter().copied()).collect();
        self.aggregates.to_bytes_with(backend, vec![("submissions", ids)])
    }
}

/// The sorted union of two sorted lists of identifiers, refused if they share one.
fn merge_disjoint(a: &[Identifier], b: &[Identifier]) -> Result<Vec<Identifier>, StatsError> {
    let mut merged = Vec::with_capacity(a.len() + b.len());
    let (mut i, mut j) = (0, 0);
    while i < a.len() && j < b.len() {
        match a[i].cmp(&b[j]) {
            std::cmp::Ordering::Less => (merged.push(a[i]), i += 1),
            std::cmp::Ordering::Greater => (merged.push(b[j]), j += 1),
            std::cmp::Ordering::Equal => {
                return Err(StatsError::Input(format!(
                    "submission {} is in two shards: each submission is counted once",
                    a[i]
                )))
            }
        };
    }
    merged.extend_from_slice(&a[i..]);
    merged.extend_from_slice(&b[j..]);
    Ok(merged)
}

/// A worker's shard: adds up `submissions` (each its name, for errors, and its bytes) of
/// `study` on `backend` with the public keys `public_keys` ([`StudyKeys::to_bytes`]); returns
/// the partial's bytes.
pub fn evaluate_shard<B: Backend, T: AsRef<[u8]>>(
    backend: &B,
    study: &Study,
    public_keys: &[u8],
    submissions: &[(String, T)],
) -> Result<Vec<u8>, StatsError> {
    with_scheme!(study, S => {
        let keys = study.keys_from_bytes::<S>(public_keys)?;
        let mut first = HashMap::new();
        let loaded = submissions
            .iter()
            .map(|(name, bytes)| study.load_submission(backend, &keys, &mut first, name, bytes.as_ref()))
            .collect::<Result<Vec<_>, _>>()?;
        study.aggregate_partial::<S, _>(backend, &keys, &loaded)?.to_bytes(backend)
    })
}

/// A tree reduction's step: the partial of every submission of `partials` ([`Study::combine`]),
/// as bytes.
pub fn combine_shards<B: Backend>(
    backend: &B,
    study: &Study,
    public_keys: &[u8],
    partials: &[&[u8]],
) -> Result<Vec<u8>, StatsError> {
    with_scheme!(study, S => {
        let keys = study.keys_from_bytes::<S>(public_keys)?;
        let loaded =
            partials.iter().map(|p| study.partial_from_bytes(backend, &keys, p)).collect::<Result<Vec<_>, _>>()?;
        study.combine::<S, _>(backend, &keys, loaded)?.to_bytes(backend)
    })
}

/// The last step: writes the aggregates of the final `partial` to `out` (what `pimhe decrypt`
/// reads), refused unless it holds exactly the `expected` submissions that were sharded (a
/// shard lost or counted twice would change the statistic silently). Returns the user count.
pub fn write_aggregates<B: Backend>(
    backend: &B,
    study: &Study,
    public_keys: &[u8],
    partial: &[u8],
    expected: usize,
    out: &Path,
    overwrite: Overwrite,
) -> Result<usize, StatsError> {
    with_scheme!(study, S => {
        let keys = study.keys_from_bytes::<S>(public_keys)?;
        let partial = study.partial_from_bytes(backend, &keys, partial)?;
        if partial.aggregates.users != expected {
            return Err(StatsError::Integrity(format!(
                "the combined aggregates hold {} submissions where {expected} were sharded: not written",
                partial.aggregates.users
            )));
        }
        write(out, &partial.aggregates.to_bytes(backend)?, Access::Public, overwrite)?;
        Ok(partial.aggregates.users)
    })
}
