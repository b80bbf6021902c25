//! Versioned binary encodings of every pimhe object (docs/SERIALIZATION.md is the
//! specification): parameter sets, secret, public, relinearization and Galois keys, plaintexts
//! and ciphertext batches of BGV, BFV and CKKS.
//!
//! Every encoding starts with a header: the magic bytes `PIMHE`, the format version, the kind
//! of object, the scheme, flags, and the SHA-256 digest of the parameters it was made under, so
//! that loading into another context is refused with a clear error. Residues are bit-packed at
//! their prime's width, little-endian throughout. Keys and ciphertexts have a compressed form
//! in which each uniform polynomial is the 32-byte seed it was expanded from (about half the
//! size): [`crate::rlwe::PublicKey::to_compressed_bytes`] and the like, and
//! [`crate::rlwe::Encryptor::encrypt_seeded`] for ciphertexts.
//!
//! Loading validates everything before it is used and never panics: every length against the
//! input left before allocating, every shape against the context, every residue below its
//! prime, no trailing bytes. A loaded secret key is wiped when dropped, as any other.
//!
//! ```
//! use pimhe_exec::CpuBackend;
//! use pimhe_schemes::bgv::*;
//! let backend = CpuBackend::new(Some(1)).unwrap();
//! let params = BgvParameters::preset(4096).unwrap();
//! let params = BgvParameters::from_bytes(&params.to_bytes()).unwrap();
//! let ctx = BgvContext::new(params).unwrap();
//! let mut keygen = KeyGenerator::new(&backend, &ctx).unwrap();
//! let secret = keygen.secret_key().unwrap();
//! let encoder = BatchEncoder::new(&ctx);
//!
//! // A client encrypts compressed (seeded) ciphertexts with its secret key...
//! let mut encryptor = Encryptor::with_secret_key(&backend, &secret).unwrap();
//! let seeded = encryptor.encrypt_seeded(&[encoder.encode(&[7, 8]).unwrap()]).unwrap();
//! let bytes = seeded.to_bytes();
//! // ... a server loads them (the seed is expanded) and sends back a full encoding.
//! let batch = CiphertextBatch::from_bytes(&backend, &ctx, &bytes).unwrap();
//! let reply = batch.to_bytes(&backend).unwrap();
//! assert!(bytes.len() < reply.len() * 6 / 10);
//!
//! let secret = SecretKey::from_bytes(&ctx, &secret.to_bytes()).unwrap();
//! let decryptor = Decryptor::new(&backend, &secret).unwrap();
//! let back = CiphertextBatch::from_bytes(&backend, &ctx, &reply).unwrap();
//! assert_eq!(&encoder.decode(&decryptor.decrypt(&back).unwrap()[0]).unwrap()[..2], &[7, 8]);
//!
//! // Objects of other parameters, or damaged ones, are refused.
//! let other = BgvContext::new(BgvParameters::preset(8192).unwrap()).unwrap();
//! assert!(CiphertextBatch::from_bytes(&backend, &other, &reply).is_err());
//! assert!(CiphertextBatch::from_bytes(&backend, &ctx, &reply[..reply.len() - 1]).is_err());
//! ```

mod bundle;
mod ciphertext;
mod files;
mod format;
mod keys;
mod params;
mod plaintext;
mod scheme;
mod seeded;

pub use crate::rlwe::SeededCiphertexts;
pub use bundle::{Bundle, BUNDLE_MAGIC, BUNDLE_VERSION};
pub use files::{create_dir, load, load_at_most, save, save_secret, save_with, Access, Existing, MAX_FILE_BYTES};
pub use format::{parameter_digest, Kind, Reader, Writer, HEADER_LEN, MAGIC, VERSION};
pub(crate) use params::{CkksFields, IntegerFields};
pub use scheme::SerialScheme;
