//! What each party of a [`Study`] writes and reads, so that they can be different machines:
//! the study as JSON, and the keys, submissions and aggregates as bundles of pimhe encodings
//! ([`pimhe_schemes::serial::Bundle`]: every entry a whole encoding with its parameter digest,
//! checked by its own loader).
//!
//! | object | entries |
//! |---|---|
//! | [`StudyKeys`] (public) | `public/i`, `relin/i` (compressed, seeded forms) per plaintext modulus `i` |
//! | [`StudySecret`] | `secret/i` |
//! | [`Submission`] | `i/e`: modulus `i`, encoded vector `e` |
//! | [`Aggregates`] | `users` (8 bytes, little-endian), `i/a`: modulus `i`, aggregate `a` |
//!
//! Loaders take the study and, for everything but the public keys, the public keys (whose
//! contexts every other object is loaded into), and refuse an object of other parameters or
//! of another shape.

use pimhe_exec::Backend;
use pimhe_schemes::rlwe::{CiphertextBatch, PublicKey, RelinKey, SecretKey};
use pimhe_schemes::serial::{Bundle, SerialScheme};
use pimhe_schemes::SchemeError;

use super::{Aggregates, Study, StudyKeys, StudySecret, Submission};
use crate::stats::scheme::{Bfv, Bgv, HeScheme};
use crate::stats::StatsError;

/// The study's description, in the public directory every party reads.
pub const STUDY_FILE: &str = "study.json";
/// The public keys ([`StudyKeys::to_bytes`]), in the public directory.
pub const PUBLIC_KEYS_FILE: &str = "public-keys.pimhe";
/// The secret keys ([`StudySecret::to_bytes`]), in the analyst's own directory only.
pub const SECRET_KEYS_FILE: &str = "secret-keys.pimhe";
/// The extension of submission and aggregate files.
pub const EXTENSION: &str = "pimhe";

impl Study {
    /// The study as pretty-printed JSON.
    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(self).expect("a study is plain data")
    }

    /// A study from JSON, checked for the scheme it declares ([`Study::validate`]).
    pub fn from_json(text: &str) -> Result<Self, StatsError> {
        let study: Study = serde_json::from_str(text).map_err(|e| StatsError::Input(format!("not a study: {e}")))?;
        match study.scheme.as_str() {
            "bgv" => study.validate::<Bgv>()?,
            "bfv" => study.validate::<Bfv>()?,
            other => return Err(StatsError::Input(format!("the study's scheme is '{other}'; allowed: bgv, bfv"))),
        }
        Ok(study)
    }

    /// The public keys from [`StudyKeys::to_bytes`], each checked against the study's
    /// parameters.
    pub fn keys_from_bytes<S: HeScheme>(&self, bytes: &[u8]) -> Result<StudyKeys<S::Context>, StatsError> {
        let bundle = Bundle::from_bytes(bytes)?;
        let (mut public, mut relin) = (Vec::new(), Vec::new());
        for (i, ctx) in self.contexts::<S>()?.iter().enumerate() {
            public.push(PublicKey::from_bytes(ctx, bundle.get(&format!("public/{i}"))?)?);
            let name = format!("relin/{i}");
            relin.push(match bundle.names().any(|n| n == name) {
                true => Some(RelinKey::from_bytes(ctx, bundle.get(&name)?)?),
                false => None,
            });
        }
        expect_entries(&bundle, 2 * public.len() - relin.iter().filter(|r| r.is_none()).count(), "public keys")?;
        Ok(StudyKeys { public, relin })
    }

    /// The secret keys from [`StudySecret::to_bytes`], in the contexts of `keys`.
    pub fn secret_from_bytes<C: SerialScheme>(
        &self,
        keys: &StudyKeys<C>,
        bytes: &[u8],
    ) -> Result<StudySecret<C>, StatsError> {
        self.check_keys(keys.public.len(), "public keys")?;
        let bundle = Bundle::from_bytes(bytes)?;
        expect_entries(&bundle, keys.public.len(), "secret keys")?;
        let keys = keys
            .public
            .iter()
            .enumerate()
            .map(|(i, public)| SecretKey::from_bytes(public.context(), bundle.get(&format!("secret/{i}"))?))
            .collect::<Result<Vec<_>, SchemeError>>()?;
        Ok(StudySecret { keys })
    }

    /// A user's submission from [`Submission::to_bytes`], onto `backend`, in the contexts of
    /// `keys`.
    pub fn submission_from_bytes<B: Backend, C: SerialScheme>(
        &self,
        backend: &B,
        keys: &StudyKeys<C>,
        bytes: &[u8],
    ) -> Result<Submission<B, C>, StatsError> {
        let encodings = self.layout()?.encodings().len();
        let ciphertexts = self.ciphertexts_from_bundle(backend, keys, &Bundle::from_bytes(bytes)?, encodings, 0)?;
        Ok(Submission { ciphertexts })
    }

    /// The server's aggregates from [`Aggregates::to_bytes`], onto `backend`, in the contexts
    /// of `keys`.
    pub fn aggregates_from_bytes<B: Backend, C: SerialScheme>(
        &self,
        backend: &B,
        keys: &StudyKeys<C>,
        bytes: &[u8],
    ) -> Result<Aggregates<B, C>, StatsError> {
        let bundle = Bundle::from_bytes(bytes)?;
        let users: [u8; 8] = bundle
            .get("users")?
            .try_into()
            .map_err(|_| StatsError::Input("the aggregates' user count is not 8 bytes".into()))?;
        let users = u64::from_le_bytes(users);
        let users = usize::try_from(users)
            .ok()
            .filter(|&u| (1..=self.max_users).contains(&u))
            .ok_or_else(|| StatsError::Input(format!("{users} users; the study allows 1 ..= {}", self.max_users)))?;
        let aggregates = self.layout()?.aggregates().len();
        let ciphertexts = self.ciphertexts_from_bundle(backend, keys, &bundle, aggregates, 1)?;
        Ok(Aggregates { users, ciphertexts })
    }

    /// `per_modulus` ciphertexts `i/j` per plaintext modulus `i`, besides `other` entries.
    fn ciphertexts_from_bundle<B: Backend, C: SerialScheme>(
        &self,
        backend: &B,
        keys: &StudyKeys<C>,
        bundle: &Bundle,
        per_modulus: usize,
        other: usize,
    ) -> Result<Vec<Vec<CiphertextBatch<B, C>>>, StatsError> {
        self.check_keys(keys.public.len(), "public keys")?;
        expect_entries(bundle, keys.public.len() * per_modulus + other, "ciphertexts")?;
        keys.public
            .iter()
            .enumerate()
            .map(|(i, public)| {
                (0..per_modulus)
                    .map(|j| {
                        let batch =
                            CiphertextBatch::from_bytes(backend, public.context(), bundle.get(&format!("{i}/{j}"))?)?;
                        if batch.count() != 1 {
                            return Err(StatsError::Input(format!(
                                "entry {i}/{j} holds {} ciphertexts; one is expected",
                                batch.count()
                            )));
                        }
                        Ok(batch)
                    })
                    .collect()
            })
            .collect()
    }
}

impl<C: SerialScheme> StudyKeys<C> {
    /// The public keys as a bundle, in their compressed (seeded) forms where they have them.
    pub fn to_bytes(&self) -> Result<Vec<u8>, StatsError> {
        let mut bundle = Bundle::new();
        for (i, (public, relin)) in self.public.iter().zip(&self.relin).enumerate() {
            bundle.push(format!("public/{i}"), public.to_compressed_bytes().unwrap_or_else(|_| public.to_bytes()))?;
            if let Some(relin) = relin {
                bundle.push(format!("relin/{i}"), relin.to_compressed_bytes().unwrap_or_else(|_| relin.to_bytes()))?;
            }
        }
        Ok(bundle.to_bytes())
    }
}

impl<C: SerialScheme> StudySecret<C> {
    /// The secret keys as a bundle (the bytes are the secret: keep them from the server).
    pub fn to_bytes(&self) -> Result<Vec<u8>, StatsError> {
        let mut bundle = Bundle::new();
        for (i, key) in self.keys.iter().enumerate() {
            bundle.push(format!("secret/{i}"), key.to_bytes())?;
        }
        Ok(bundle.to_bytes())
    }
}

impl<B: Backend, C: SerialScheme> Submission<B, C> {
    /// The submission as a bundle (downloaded from `backend`).
    pub fn to_bytes(&self, backend: &B) -> Result<Vec<u8>, StatsError> {
        ciphertexts_to_bundle(backend, &self.ciphertexts, Bundle::new())
    }
}

impl<B: Backend, C: SerialScheme> Aggregates<B, C> {
    /// The aggregates and their user count as a bundle (downloaded from `backend`).
    pub fn to_bytes(&self, backend: &B) -> Result<Vec<u8>, StatsError> {
        let mut bundle = Bundle::new();
        bundle.push("users", (self.users as u64).to_le_bytes().to_vec())?;
        ciphertexts_to_bundle(backend, &self.ciphertexts, bundle)
    }
}

/// `ciphertexts[i][j]` added to `bundle` as entries `i/j`.
fn ciphertexts_to_bundle<B: Backend, C: SerialScheme>(
    backend: &B,
    ciphertexts: &[Vec<CiphertextBatch<B, C>>],
    mut bundle: Bundle,
) -> Result<Vec<u8>, StatsError> {
    for (i, per_modulus) in ciphertexts.iter().enumerate() {
        for (j, batch) in per_modulus.iter().enumerate() {
            bundle.push(format!("{i}/{j}"), batch.to_bytes(backend)?)?;
        }
    }
    Ok(bundle.to_bytes())
}

/// Errors unless `bundle` has exactly `expected` entries (an entry too many is another
/// study's or a tampered file's).
fn expect_entries(bundle: &Bundle, expected: usize, what: &str) -> Result<(), StatsError> {
    let found = bundle.names().count();
    if found != expected {
        return Err(StatsError::Input(format!(
            "the {what} file has {found} entries; this study's has {expected}: {:?}",
            bundle.names().collect::<Vec<_>>()
        )));
    }
    Ok(())
}
