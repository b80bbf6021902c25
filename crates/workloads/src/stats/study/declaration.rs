//! What every party of a study agrees on before any data exists: the declaration
//! ([`StudySpec`] as the analyst states it, [`Study`] with the plaintext moduli chosen from it
//! and the study's random [`Identifier`]).

use std::sync::Arc;

use pimhe_math::Sampler;
use pimhe_schemes::encoder::ExactScheme;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::stats::dataset::MAX_DECIMALS;
use crate::stats::layout::Layout;
use crate::stats::{balanced_plain_moduli, Statistic, StatsError};

/// The ring degree of a study that no worst-case bound covers (BFV variance and linreg) or
/// whose bound no preset's chain holds, as before N was chosen: its noise budget is measured
/// at keygen, which first tries the smaller presets by that measurement (BFV products).
pub const DEFAULT_N: usize = 8192;

/// The degrees a study may pick, smallest first: the 128-bit presets with special primes (so
/// that every study has relinearization keys).
pub(super) const AUTO_DEGREES: [usize; 4] = [4096, 8192, 16384, 32768];

/// A random 128-bit identifier: of a study (bound to its keys and carried by every file made
/// for it) or of one submission. Written as 32 hexadecimal digits.
/// Ordered by bytes, so that a partial's list of submissions can be kept sorted.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Identifier([u8; Identifier::LEN]);

impl Identifier {
    /// Bytes of an identifier.
    pub const LEN: usize = 16;

    /// A fresh identifier from `sampler` (the OS's randomness, or a test's seed).
    pub fn random(sampler: &mut Sampler) -> Self {
        let mut bytes = [0u8; Self::LEN];
        sampler.fill_bytes(&mut bytes);
        Self(bytes)
    }

    /// The identifier of its bytes, if they are [`Identifier::LEN`].
    pub fn from_bytes(bytes: &[u8]) -> Option<Self> {
        bytes.try_into().ok().map(Self)
    }

    /// Its bytes.
    pub fn as_bytes(&self) -> &[u8; Self::LEN] {
        &self.0
    }
}

impl std::fmt::Display for Identifier {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.0.iter().try_for_each(|b| write!(f, "{b:02x}"))
    }
}

impl std::str::FromStr for Identifier {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, String> {
        let digits = |i: usize| text.get(2 * i..2 * i + 2).and_then(|d| u8::from_str_radix(d, 16).ok());
        if text.len() != 2 * Self::LEN {
            return Err(format!("an identifier is {} hexadecimal digits; '{text}' is not", 2 * Self::LEN));
        }
        let bytes: Option<Vec<u8>> = (0..Self::LEN).map(digits).collect();
        bytes.and_then(|b| Self::from_bytes(&b)).ok_or_else(|| format!("'{text}' is not hexadecimal"))
    }
}

impl Serialize for Identifier {
    fn serialize<Z: Serializer>(&self, serializer: Z) -> Result<Z::Ok, Z::Error> {
        serializer.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for Identifier {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        String::deserialize(deserializer)?.parse().map_err(serde::de::Error::custom)
    }
}

/// What the analyst declares: the statistic, the columns and the bounds every submission and
/// aggregate must keep.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StudySpec {
    /// Which statistic.
    pub statistic: Statistic,
    /// The columns each user submits, in order (linreg: the features, then the response).
    pub columns: Vec<String>,
    /// Fixed-point decimal places (0 ..= 9): each value is submitted as `value * 10^decimals`.
    pub decimals: u32,
    /// The largest magnitude of a submitted value, in fixed point.
    pub max_value: u64,
    /// The most users whose submissions the server may add up.
    pub max_users: usize,
    /// The fewest users whose aggregate the analyst decrypts (a statistic of one user is that
    /// user's data): 2 unless set.
    pub min_users: usize,
    /// Ring degree (the scheme's 128-bit preset for it, with each plaintext modulus); `None`:
    /// the smallest that the bounds allow ([`Study::new`] says which).
    pub n: Option<usize>,
}

impl StudySpec {
    /// A declaration with the default [`StudySpec::min_users`] of 2.
    pub fn new(
        statistic: Statistic,
        columns: &[&str],
        decimals: u32,
        max_value: u64,
        max_users: usize,
        n: usize,
    ) -> Self {
        let columns = columns.iter().map(|c| c.to_string()).collect();
        Self { statistic, columns, decimals, max_value, max_users, min_users: 2, n: Some(n) }
    }

    /// Errors unless the declaration can be a study: named, distinct columns, at most
    /// [`MAX_DECIMALS`] decimals, 1 <= min users <= max users.
    fn check(&self) -> Result<(), StatsError> {
        if self.columns.is_empty() {
            return Err(StatsError::Input("a study needs at least one column".into()));
        }
        if let Some(bad) = self.columns.iter().find(|c| c.is_empty() || c.trim() != c.as_str()) {
            return Err(StatsError::Input(format!(
                "column name '{bad}': names must be non-empty, without surrounding spaces (as a CSV header has them)"
            )));
        }
        if let Some((i, name)) = self.columns.iter().enumerate().find(|(i, name)| self.columns[..*i].contains(name)) {
            return Err(StatsError::Input(format!(
                "column '{name}' is named twice (positions {} and {}); every column must be named once",
                self.columns.iter().position(|c| c == name).unwrap_or(0) + 1,
                i + 1
            )));
        }
        if self.decimals > MAX_DECIMALS {
            return Err(StatsError::Input(format!("{} decimal places; allowed 0 ..= {MAX_DECIMALS}", self.decimals)));
        }
        if self.max_users == 0 {
            return Err(StatsError::Input("a study needs at least one user (max users >= 1)".into()));
        }
        if !(1..=self.max_users).contains(&self.min_users) {
            return Err(StatsError::Input(format!(
                "min users {}: allowed 1 ..= {} (the max users)",
                self.min_users, self.max_users
            )));
        }
        Ok(())
    }
}

/// A declared study (public: nothing in it is secret). Saved as JSON beside the public keys;
/// the analyst keeps a copy with the secret keys.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Study {
    /// The study's random identifier, carried by its keys and every file made for it.
    pub id: Identifier,
    /// Which statistic.
    pub statistic: Statistic,
    /// The columns each user submits, in order (linreg: the features, then the response).
    pub columns: Vec<String>,
    /// Fixed-point decimal places: each value is submitted as `value * 10^decimals`, exactly.
    pub decimals: u32,
    /// The largest magnitude of a submitted value, in fixed point (`value * 10^decimals`).
    pub max_value: u64,
    /// The most users whose submissions the server may add up.
    pub max_users: usize,
    /// The fewest users whose aggregate the analyst decrypts.
    pub min_users: usize,
    /// The scheme (`bgv` or `bfv`).
    pub scheme: String,
    /// Ring degree (the scheme's 128-bit preset for it, with each plaintext modulus).
    pub n: usize,
    /// The plaintext moduli: one key set and one computation each, combined by CRT.
    pub plain_moduli: Vec<u32>,
    /// The ciphertext primes a submission keeps (the lowest of the chain): a client switches
    /// its ciphertexts down to them before writing, so that the aggregate of the most users
    /// still decrypts ([`Study::sizing`] says why this many). All the data primes for BFV (no
    /// modulus chain) and where no worst-case bound covers the study.
    #[serde(default)]
    pub submission_primes: usize,
    /// Whether the keys come from a fixed seed (tests only: anyone with the seed can make the
    /// secret key). Every command that reads such a study warns.
    pub seeded_keys: bool,
}

impl Study {
    /// Declares the study `spec` with scheme `S`, identified by `id` (draw it with
    /// [`Identifier::random`]): chooses the plaintext moduli that keep every aggregate exact.
    ///
    /// Without a declared N, the smallest 128-bit preset whose slots, plaintext moduli and
    /// worst-case noise bound ([`super::sizing`]) hold the bounds, where a bound covers the study
    /// (BGV; a BFV mean); else [`DEFAULT_N`], whose budget keygen measures.
    pub fn new<S: ExactScheme>(spec: &StudySpec, id: Identifier) -> Result<Self, StatsError> {
        spec.check()?;
        let Some(n) = spec.n else {
            let sized = AUTO_DEGREES.iter().find_map(|&n| {
                let study = Self::new::<S>(&StudySpec { n: Some(n), ..spec.clone() }, id).ok()?;
                let fits = super::sizing::full_chain_fits::<S>(&study).ok()?;
                fits.then_some(study)
            });
            return match sized {
                Some(study) => Ok(study),
                None => Self::new::<S>(&StudySpec { n: Some(DEFAULT_N), ..spec.clone() }, id),
            };
        };
        let layout = Layout::new(spec.statistic, &spec.columns, spec.decimals, n)?;
        let bound = Self::bound(&layout, spec.max_value, spec.max_users)?;
        let moduli = balanced_plain_moduli(bound, n, S::max_plain_bits(n)?)?;
        let submission_primes = super::sizing::submission_primes::<S>(&layout, n, &moduli, spec.max_users)?;
        Ok(Self {
            id,
            statistic: spec.statistic,
            columns: spec.columns.clone(),
            decimals: spec.decimals,
            max_value: spec.max_value,
            max_users: spec.max_users,
            min_users: spec.min_users,
            scheme: S::NAME.to_string(),
            n,
            plain_moduli: moduli,
            submission_primes,
            seeded_keys: false,
        })
    }

    /// The same study, marked as one whose keys come from a fixed seed.
    pub fn with_seeded_keys(mut self) -> Self {
        self.seeded_keys = true;
        self
    }

    /// The analyst's declaration of this study.
    pub fn spec(&self) -> StudySpec {
        StudySpec {
            statistic: self.statistic,
            columns: self.columns.clone(),
            decimals: self.decimals,
            max_value: self.max_value,
            max_users: self.max_users,
            min_users: self.min_users,
            n: Some(self.n),
        }
    }

    /// Checks a study read from a file: that it is one [`Study::new`] makes for scheme `S`
    /// (the same moduli from the same bounds), so that a tampered or stale file is refused
    /// rather than giving wrong totals.
    pub fn validate<S: ExactScheme>(&self) -> Result<(), StatsError> {
        let expected = Self::new::<S>(&self.spec(), self.id)?;
        if (&self.scheme, &self.plain_moduli) != (&expected.scheme, &expected.plain_moduli) {
            return Err(StatsError::Input(format!(
                "the study declares scheme {} and plaintext moduli {:?}; scheme {} with these bounds needs {:?}",
                self.scheme,
                self.plain_moduli,
                S::NAME,
                expected.plain_moduli
            )));
        }
        if self.submission_primes != expected.submission_primes {
            return Err(StatsError::Input(format!(
                "the study declares submissions of {} ciphertext primes; these bounds at N = {} need {} (a study.json \
                 edited, or written by another version)",
                self.submission_primes, self.n, expected.submission_primes
            )));
        }
        Ok(())
    }

    /// Errors unless `kept` (the analyst's copy of the declaration) is this study, naming the
    /// fields that differ: the public copy may have been edited where the server can write.
    pub fn expect_declaration(&self, kept: &Study) -> Result<(), StatsError> {
        if self == kept {
            return Ok(());
        }
        let (public, kept_json) = (serde_json::to_value(self), serde_json::to_value(kept));
        let differing: Vec<String> = match (public, kept_json) {
            (Ok(serde_json::Value::Object(public)), Ok(serde_json::Value::Object(kept))) => kept
                .iter()
                .filter(|(field, value)| public.get(*field) != Some(value))
                .map(|(field, value)| {
                    format!(
                        "{field} {} (kept) vs {} (public)",
                        value,
                        public.get(field).unwrap_or(&serde_json::Value::Null)
                    )
                })
                .collect(),
            _ => vec!["(not comparable)".into()],
        };
        Err(StatsError::Input(format!(
            "the public study differs from the declaration the analyst keeps with the secret keys: {}; the public \
             copy was edited or belongs to another study, so nothing is decrypted against it",
            differing.join(", ")
        )))
    }

    /// The largest magnitude of an aggregate over `users` users of values up to `max_value`.
    fn bound(layout: &Layout, max_value: u64, users: usize) -> Result<u128, StatsError> {
        layout
            .term_bound(u128::from(max_value))
            .and_then(|term| term.checked_mul(users as u128))
            .filter(|&bound| bound < 1 << 126)
            .ok_or_else(|| {
                StatsError::Capacity(format!(
                    "{users} users of values up to {max_value} (fixed point) can sum past 2^126: \
                     declare fewer users, fewer decimals or smaller values"
                ))
            })
    }

    pub(super) fn layout(&self) -> Result<Layout, StatsError> {
        Layout::new(self.statistic, &self.columns, self.decimals, self.n)
    }

    /// The contexts of the study's parameter sets, one per plaintext modulus.
    pub fn contexts<S: ExactScheme>(&self) -> Result<Vec<Arc<S>>, StatsError> {
        self.validate::<S>()?;
        Ok(self
            .plain_moduli
            .iter()
            .map(|&t| S::from_params(S::preset_with_plain_modulus(self.n, t)?))
            .collect::<Result<_, _>>()?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pimhe_schemes::bgv::BgvContext;

    fn spec(columns: &[&str]) -> StudySpec {
        StudySpec::new(Statistic::Mean, columns, 0, 100, 10, 4096)
    }

    #[test]
    fn identifiers_print_and_parse_as_hex() {
        let id = Identifier::random(&mut Sampler::from_seed_u64(3));
        assert_eq!(id.to_string().len(), 32);
        assert_eq!(id.to_string().parse::<Identifier>(), Ok(id));
        assert!("12".parse::<Identifier>().is_err());
        assert!("zz".repeat(16).parse::<Identifier>().is_err());
        let json = serde_json::to_string(&id).unwrap();
        assert_eq!(serde_json::from_str::<Identifier>(&json).unwrap(), id);
    }

    #[test]
    fn declarations_a_later_step_would_refuse_are_refused_at_once() {
        let id = Identifier::random(&mut Sampler::from_seed_u64(1));
        for (columns, expected) in
            [(&[][..], "at least one column"), (&["a", ""], "non-empty"), (&["a", "b", "a"], "positions 1 and 3")]
        {
            let message = Study::new::<BgvContext>(&spec(columns), id).unwrap_err().to_string();
            assert!(message.contains(expected), "{columns:?}: {message}");
        }
        let mut decimals = spec(&["a"]);
        decimals.decimals = 10;
        assert!(Study::new::<BgvContext>(&decimals, id).unwrap_err().to_string().contains("0 ..= 9"));
        let mut min = spec(&["a"]);
        min.min_users = 11;
        assert!(Study::new::<BgvContext>(&min, id).unwrap_err().to_string().contains("min users 11"));
    }

    #[test]
    fn an_edited_public_copy_names_the_fields_that_differ() {
        let study =
            Study::new::<BgvContext>(&spec(&["a"]), Identifier::random(&mut Sampler::from_seed_u64(1))).unwrap();
        assert!(study.expect_declaration(&study).is_ok());
        let mut edited = study.clone();
        edited.decimals = 3;
        let message = edited.expect_declaration(&study).unwrap_err().to_string();
        assert!(message.contains("decimals 0 (kept) vs 3 (public)"), "{message}");
    }
}
