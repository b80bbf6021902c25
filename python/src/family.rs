//! Type erasure: the Rust library is generic over the scheme (`S`: BGV, BFV, CKKS contexts) and
//! the backend (`B`: CPU, UPMEM emulator, near-bank recorder); Python sees one class per concept. A value generic
//! over both is stored as `ByScheme<F>` (one variant per scheme) of `OnDev<G>` (one per
//! backend), the "families" `F` and `G` naming the concrete type for each, so that the
//! bindings' logic is written once as generic functions and the `dispatch!` macros pick the
//! monomorphised instance.

use std::sync::Arc;

use pimhe_exec::{Backend, CpuBackend};
use pimhe_nearbank::NearbankBackend;
use pimhe_pim::runtime::PimBackend;
use pimhe_schemes::bfv::BfvContext;
use pimhe_schemes::bgv::BgvContext;
use pimhe_schemes::ckks::CkksContext;
use pimhe_schemes::rlwe::RlweScheme;

/// A type constructor over schemes: `Of<S>` is the concrete type stored for scheme `S`.
pub trait Family {
    type Of<S: Scheme>: Send + Sync;
}

/// A type constructor over backends: `On<B>` is the concrete type stored for backend `B`.
pub trait DevFamily {
    type On<B: Dev>: Send + Sync;
}

/// One value of family `F`, for whichever scheme it was made.
pub enum ByScheme<F: Family> {
    Bgv(F::Of<BgvContext>),
    Bfv(F::Of<BfvContext>),
    Ckks(F::Of<CkksContext>),
}

/// One value of family `G`, for whichever backend it lives on.
pub enum OnDev<G: DevFamily> {
    Cpu(G::On<CpuBackend>),
    Pim(G::On<PimBackend>),
    Nearbank(G::On<NearbankBackend>),
}

/// The schemes the bindings expose (the per-scheme part of the bindings is in `scheme.rs`).
pub trait Scheme: RlweScheme + pimhe_schemes::serial::SerialScheme {
    /// Display name ("BGV").
    const LABEL: &'static str;
    fn get<F: Family>(value: &ByScheme<F>) -> Option<&F::Of<Self>>;
    fn wrap<F: Family>(value: F::Of<Self>) -> ByScheme<F>;
}

macro_rules! scheme {
    ($ty:ty, $variant:ident, $label:expr) => {
        impl Scheme for $ty {
            const LABEL: &'static str = $label;
            fn get<F: Family>(value: &ByScheme<F>) -> Option<&F::Of<Self>> {
                match value {
                    ByScheme::$variant(v) => Some(v),
                    _ => None,
                }
            }
            fn wrap<F: Family>(value: F::Of<Self>) -> ByScheme<F> {
                ByScheme::$variant(value)
            }
        }
    };
}
scheme!(BgvContext, Bgv, "BGV");
scheme!(BfvContext, Bfv, "BFV");
scheme!(CkksContext, Ckks, "CKKS");

impl<F: Family> ByScheme<F> {
    /// The scheme's display name.
    pub fn label(&self) -> &'static str {
        match self {
            ByScheme::Bgv(_) => BgvContext::LABEL,
            ByScheme::Bfv(_) => BfvContext::LABEL,
            ByScheme::Ckks(_) => CkksContext::LABEL,
        }
    }
}

/// The backends the bindings expose.
pub trait Dev: Backend + Sized + 'static {
    fn get<G: DevFamily>(value: &OnDev<G>) -> Option<&G::On<Self>>;
    fn wrap<G: DevFamily>(value: G::On<Self>) -> OnDev<G>;
}

impl Dev for CpuBackend {
    fn get<G: DevFamily>(value: &OnDev<G>) -> Option<&G::On<Self>> {
        match value {
            OnDev::Cpu(v) => Some(v),
            _ => None,
        }
    }
    fn wrap<G: DevFamily>(value: G::On<Self>) -> OnDev<G> {
        OnDev::Cpu(value)
    }
}

impl Dev for PimBackend {
    fn get<G: DevFamily>(value: &OnDev<G>) -> Option<&G::On<Self>> {
        match value {
            OnDev::Pim(v) => Some(v),
            _ => None,
        }
    }
    fn wrap<G: DevFamily>(value: G::On<Self>) -> OnDev<G> {
        OnDev::Pim(value)
    }
}

impl Dev for NearbankBackend {
    fn get<G: DevFamily>(value: &OnDev<G>) -> Option<&G::On<Self>> {
        match value {
            OnDev::Nearbank(v) => Some(v),
            _ => None,
        }
    }
    fn wrap<G: DevFamily>(value: G::On<Self>) -> OnDev<G> {
        OnDev::Nearbank(value)
    }
}

impl<G: DevFamily> OnDev<G> {
    /// The backend's name as the CLI spells it.
    pub fn backend_name(&self) -> &'static str {
        match self {
            OnDev::Cpu(_) => "cpu",
            OnDev::Pim(_) => "upmem-emu",
            OnDev::Nearbank(_) => "nearbank",
        }
    }
}

/// Runs `$body` with `$S` the scheme type and `$v` the value of a `ByScheme`.
#[macro_export]
macro_rules! by_scheme {
    ($value:expr, $S:ident, $v:ident => $body:expr) => {
        match $value {
            $crate::family::ByScheme::Bgv($v) => {
                #[allow(dead_code)]
                type $S = pimhe_schemes::bgv::BgvContext;
                $body
            }
            $crate::family::ByScheme::Bfv($v) => {
                #[allow(dead_code)]
                type $S = pimhe_schemes::bfv::BfvContext;
                $body
            }
            $crate::family::ByScheme::Ckks($v) => {
                #[allow(dead_code)]
                type $S = pimhe_schemes::ckks::CkksContext;
                $body
            }
        }
    };
}

/// Runs `$body` with `$B` the backend type and `$v` the value of an `OnDev`.
#[macro_export]
macro_rules! on_dev {
    ($value:expr, $B:ident, $v:ident => $body:expr) => {
        match $value {
            $crate::family::OnDev::Cpu($v) => {
                #[allow(dead_code)]
                type $B = pimhe_exec::CpuBackend;
                $body
            }
            $crate::family::OnDev::Pim($v) => {
                #[allow(dead_code)]
                type $B = pimhe_pim::runtime::PimBackend;
                $body
            }
            $crate::family::OnDev::Nearbank($v) => {
                #[allow(dead_code)]
                type $B = pimhe_nearbank::NearbankBackend;
                $body
            }
        }
    };
}

/// Both: `$S`, `$B` and the innermost value `$v` of a `ByScheme<_ of OnDev<_>>`.
#[macro_export]
macro_rules! dispatch {
    ($value:expr, $S:ident, $B:ident, $v:ident => $body:expr) => {
        $crate::by_scheme!($value, $S, inner => $crate::on_dev!(inner, $B, $v => $body))
    };
}

/// A type constructor over lifetimes: `At<'a>` is a value that borrows a backend `B` for `'a`
/// (`Encryptor<'a, B, S>` and the like).
pub trait Borrower<B: 'static>: 'static {
    type At<'a>: Send + Sync
    where
        B: 'a;
}

/// A value that borrows a backend stored together with the `Arc` that keeps the backend alive,
/// so that Python objects (which cannot carry lifetimes) can own it: a self-referential struct
/// made by `ouroboros`, which drops the value before the `Arc`. The value is reached through
/// closures (`with_value`, `with_value_mut`), which cannot let the borrow escape.
#[ouroboros::self_referencing]
pub struct Anchored<B: 'static, T: Borrower<B>> {
    backend: Arc<B>,
    family: std::marker::PhantomData<T>,
    #[borrows(backend)]
    #[not_covariant]
    pub(crate) value: <T as Borrower<B>>::At<'this>,
}

impl<B: 'static, T: Borrower<B>> Anchored<B, T> {
    /// Builds the value from a reference to the backend that lives as long as the result.
    pub fn make<E>(
        backend: Arc<B>,
        make: impl for<'a> FnOnce(&'a B) -> Result<<T as Borrower<B>>::At<'a>, E>,
    ) -> Result<Self, E> {
        Self::try_new(backend, std::marker::PhantomData, |b: &Arc<B>| make(&**b))
    }

    /// The backend the value borrows.
    pub fn backend(&self) -> &Arc<B> {
        self.borrow_backend()
    }
}
