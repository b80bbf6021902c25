//! What each party of a [`Study`] writes and reads, so that they can be different machines:
//! the study as JSON, and the keys, submissions and aggregates as bundles of pimhe encodings
//! ([`pimhe_schemes::serial::Bundle`]: every entry a whole encoding with its parameter digest,
//! checked by its own loader, the bundle checksummed).
//!
//! | object | entries |
//! |---|---|
//! | [`StudyKeys`] (public) | `study` (the study's identifier), `public/i`, `relin/i` (compressed, seeded forms) per plaintext modulus `i` |
//! | [`StudySecret`] | `study` (the analyst's copy of the declaration, JSON), `secret/i` |
//! | [`Submission`] | `study`, `submission` (its own identifier), `i/e`: modulus `i`, encoded vector `e` |
//! | [`Aggregates`] | `study`, `users` (8 bytes, little-endian), `i/a`: modulus `i`, aggregate `a` |
//!
//! Loaders take the study and, for submissions and aggregates, the public keys (whose contexts
//! every other object is loaded into), and refuse an object of another study (by its
//! identifier), of other parameters or of another shape. The largest legitimate size of each
//! file follows from the study's parameters ([`Study::max_file_bytes`]), so a reader can refuse
//! a larger one before reading it.

use pimhe_exec::Backend;
use pimhe_schemes::bfv::BfvContext;
use pimhe_schemes::bgv::BgvContext;
use pimhe_schemes::encoder::ExactScheme;
use pimhe_schemes::rlwe::{CiphertextBatch, PublicKey, RelinKey, SecretKey};
use pimhe_schemes::serial::{Bundle, SerialScheme, HEADER_LEN};
use pimhe_schemes::SchemeError;

use super::{Aggregates, Identifier, Study, StudyKeys, StudySecret, Submission};
use crate::stats::StatsError;

/// The study's description, in the public directory every party reads.
pub const STUDY_FILE: &str = "study.json";
/// The public keys ([`StudyKeys::to_bytes`]), in the public directory.
pub const PUBLIC_KEYS_FILE: &str = "public-keys.pimhe";
/// The secret keys ([`StudySecret::to_bytes`]), in the analyst's own directory only.
pub const SECRET_KEYS_FILE: &str = "secret-keys.pimhe";
/// The extension of submission and aggregate files.
pub const EXTENSION: &str = "pimhe";

/// The kinds of file a study reads from where others can write, for their size bounds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum StudyFile {
    /// The public keys.
    PublicKeys,
    /// One user's submission.
    Submission,
    /// The server's aggregates.
    Aggregates,
}

impl Study {
    /// The study as pretty-printed JSON.
    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(self).expect("a study is plain data")
    }

    /// A study from JSON, checked for the scheme it declares ([`Study::validate`]).
    pub fn from_json(text: &str) -> Result<Self, StatsError> {
        let study: Study = serde_json::from_str(text).map_err(|e| StatsError::Input(format!("not a study: {e}")))?;
        match study.scheme.as_str() {
            "bgv" => study.validate::<BgvContext>()?,
            "bfv" => study.validate::<BfvContext>()?,
            other => return Err(StatsError::Input(format!("the study's scheme is '{other}'; allowed: bgv, bfv"))),
        }
        Ok(study)
    }

    /// The public keys from [`StudyKeys::to_bytes`], each checked against the study's
    /// parameters, refused if they are another study's.
    pub fn keys_from_bytes<S: ExactScheme + SerialScheme>(&self, bytes: &[u8]) -> Result<StudyKeys<S>, StatsError> {
        let bundle = Bundle::from_bytes(bytes)?;
        self.expect_study(study_of(&bundle)?, "the public keys")?;
        let (mut public, mut relin) = (Vec::new(), Vec::new());
        for (i, ctx) in self.contexts::<S>()?.iter().enumerate() {
            public.push(PublicKey::from_bytes(ctx, bundle.get(&format!("public/{i}"))?)?);
            let name = format!("relin/{i}");
            relin.push(match bundle.names().any(|n| n == name) {
                true => Some(RelinKey::from_bytes(ctx, bundle.get(&name)?)?),
                false => None,
            });
        }
        expect_entries(&bundle, 1 + 2 * public.len() - relin.iter().filter(|r| r.is_none()).count(), "public keys")?;
        Ok(StudyKeys { study: self.id, public, relin })
    }

    /// The declaration the analyst keeps in the secret keys' file ([`StudySecret::to_bytes`]).
    pub fn kept_in(secret_bytes: &[u8]) -> Result<Study, StatsError> {
        let bundle = Bundle::from_bytes(secret_bytes)?;
        let text = std::str::from_utf8(bundle.get("study")?)
            .map_err(|_| StatsError::Input("the secret keys' declaration is not UTF-8".into()))?;
        Study::from_json(text)
    }

    /// The secret keys from [`StudySecret::to_bytes`], which must hold this declaration.
    pub fn secret_from_bytes<S: ExactScheme + SerialScheme>(&self, bytes: &[u8]) -> Result<StudySecret<S>, StatsError> {
        self.expect_declaration(&Self::kept_in(bytes)?)?;
        let bundle = Bundle::from_bytes(bytes)?;
        let contexts = self.contexts::<S>()?;
        expect_entries(&bundle, 1 + contexts.len(), "secret keys")?;
        let keys = contexts
            .iter()
            .enumerate()
            .map(|(i, ctx)| SecretKey::from_bytes(ctx, bundle.get(&format!("secret/{i}"))?))
            .collect::<Result<Vec<_>, SchemeError>>()?;
        Ok(StudySecret { study: self.clone(), keys })
    }

    /// A user's submission from [`Submission::to_bytes`], onto `backend`, in the contexts of
    /// `keys`; refused if it is another study's.
    pub fn submission_from_bytes<B: Backend, C: SerialScheme>(
        &self,
        backend: &B,
        keys: &StudyKeys<C>,
        bytes: &[u8],
    ) -> Result<Submission<B, C>, StatsError> {
        let bundle = Bundle::from_bytes(bytes)?;
        self.expect_study(study_of(&bundle)?, "the submission")?;
        let id = identifier(&bundle, "submission")?;
        let encodings = self.layout()?.encodings().len();
        let ciphertexts = self.ciphertexts_from_bundle(backend, keys, &bundle, encodings, 2)?;
        Ok(Submission { study: self.id, id, ciphertexts })
    }

    /// The server's aggregates from [`Aggregates::to_bytes`], onto `backend`, in the contexts
    /// of `keys`; refused if they are another study's.
    pub fn aggregates_from_bytes<B: Backend, C: SerialScheme>(
        &self,
        backend: &B,
        keys: &StudyKeys<C>,
        bytes: &[u8],
    ) -> Result<Aggregates<B, C>, StatsError> {
        self.aggregates_from_bundle(backend, keys, &Bundle::from_bytes(bytes)?, 0)
    }

    /// The aggregates of `bundle` (see [`Study::aggregates_from_bytes`]), which holds `extra`
    /// entries besides them (a partial's list of submissions).
    pub(super) fn aggregates_from_bundle<B: Backend, C: SerialScheme>(
        &self,
        backend: &B,
        keys: &StudyKeys<C>,
        bundle: &Bundle,
        extra: usize,
    ) -> Result<Aggregates<B, C>, StatsError> {
        self.expect_study(study_of(bundle)?, "the aggregates")?;
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
        let ciphertexts = self.ciphertexts_from_bundle(backend, keys, bundle, aggregates, 2 + extra)?;
        Ok(Aggregates { study: self.id, users, ciphertexts })
    }

    /// The most bytes a legitimate file of `kind` can have under scheme `S` (an upper bound
    /// from the parameters: every residue counted at 32 bits where it is packed at its prime's
    /// width, every header and name at its longest).
    pub(crate) fn max_file_bytes<S: ExactScheme>(&self, kind: StudyFile) -> Result<u64, StatsError> {
        const FRAMING: u64 = 8 + 2 + 4 + 32;
        const ENTRY: u64 = 1 + 255 + 4;
        let contexts = self.contexts::<S>()?;
        let moduli = contexts.len() as u64;
        let Some(ctx) = contexts.first() else { return Ok(FRAMING) };
        let rlwe = ctx.rlwe().params();
        let n = rlwe.degree() as u64;
        let (data, all) = (rlwe.data_primes().len() as u64, rlwe.primes().len() as u64);
        // Submissions and aggregates keep the study's primes (all of them in a study.json that
        // predates the choice: then the read refuses it as stale, after its size).
        let kept = if self.submission_primes == 0 { data } else { self.submission_primes as u64 };
        // One encoding of `polynomials` polynomials over `primes` primes, with its header.
        let encoding = |polynomials: u64, primes: u64| ENTRY + HEADER_LEN as u64 + 64 + polynomials * n * primes * 4;
        let layout = self.layout()?;
        Ok(FRAMING
            + match kind {
                StudyFile::PublicKeys => ENTRY + moduli * (encoding(2, data) + encoding(2 * rlwe.dnum() as u64, all)),
                StudyFile::Submission => 2 * ENTRY + moduli * layout.encodings().len() as u64 * encoding(2, kept),
                StudyFile::Aggregates => 2 * ENTRY + moduli * layout.aggregates().len() as u64 * encoding(3, kept),
            })
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
        bundle.push("study", self.study.as_bytes().to_vec())?;
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
    /// The secret keys and the analyst's copy of the declaration as a bundle (the bytes are
    /// the secret: keep them from the server).
    pub fn to_bytes(&self) -> Result<Vec<u8>, StatsError> {
        let mut bundle = Bundle::new();
        bundle.push("study", self.study.to_json().into_bytes())?;
        for (i, key) in self.keys.iter().enumerate() {
            bundle.push(format!("secret/{i}"), key.to_bytes())?;
        }
        Ok(bundle.to_bytes())
    }
}

impl<B: Backend, C: SerialScheme> Submission<B, C> {
    /// The submission as a bundle (downloaded from `backend`).
    pub fn to_bytes(&self, backend: &B) -> Result<Vec<u8>, StatsError> {
        let mut bundle = Bundle::new();
        bundle.push("study", self.study.as_bytes().to_vec())?;
        bundle.push("submission", self.id.as_bytes().to_vec())?;
        ciphertexts_to_bundle(backend, &self.ciphertexts, bundle)
    }
}

impl<B: Backend, C: SerialScheme> Aggregates<B, C> {
    /// The aggregates and their user count as a bundle (downloaded from `backend`).
    pub fn to_bytes(&self, backend: &B) -> Result<Vec<u8>, StatsError> {
        self.to_bytes_with(backend, Vec::new())
    }

    /// [`Aggregates::to_bytes`] with the `extra` entries (name, bytes) before the ciphertexts.
    pub(super) fn to_bytes_with(&self, backend: &B, extra: Vec<(&str, Vec<u8>)>) -> Result<Vec<u8>, StatsError> {
        let mut bundle = Bundle::new();
        bundle.push("study", self.study.as_bytes().to_vec())?;
        bundle.push("users", (self.users as u64).to_le_bytes().to_vec())?;
        for (name, bytes) in extra {
            bundle.push(name, bytes)?;
        }
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

/// The study identifier a bundle carries.
fn study_of(bundle: &Bundle) -> Result<Identifier, StatsError> {
    identifier(bundle, "study")
}

/// The identifier in entry `name` of `bundle`.
fn identifier(bundle: &Bundle, name: &str) -> Result<Identifier, StatsError> {
    Identifier::from_bytes(bundle.get(name)?)
        .ok_or_else(|| StatsError::Input(format!("the '{name}' entry is not a {}-byte identifier", Identifier::LEN)))
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
