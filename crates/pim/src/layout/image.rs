//! What a DPU needs for one prime: the MRAM layout ([`MramLayout`]), the twiddle and
//! multiplication tables ([`PrimeTables`]) and the image uploaded before a launch
//! ([`prime_image`]).

use pimhe_math::{Modulus, NttTable};
use serde::{Deserialize, Serialize};

use super::interface::words_to_bytes;
use super::interface::*;

/// Where the parts of one DPU's MRAM image go (see the module documentation).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct MramLayout {
    /// Ring degree N.
    pub n: usize,
    /// Forward twiddles (N words), their Shoup constants (N words), multiplication tables.
    pub twiddle_offset: u32,
    /// Inverse twiddles (N words), their Shoup constants (N words), multiplication tables.
    pub inv_twiddle_offset: u32,
    /// Command list.
    pub command_offset: u32,
    /// Command slots reserved.
    pub command_capacity: u32,
    /// First operand byte (8-aligned).
    pub data_offset: u32,
}

impl MramLayout {
    /// Header, tables, `command_capacity` command slots, then operands.
    pub fn new(n: usize, command_capacity: usize) -> Self {
        let twiddle_offset = HEADER_BYTES as u32;
        let section = 4 * table_words(n) as u32;
        let inv_twiddle_offset = twiddle_offset + section;
        let command_offset = inv_twiddle_offset + section;
        let commands_end = command_offset + (COMMAND_BYTES * command_capacity) as u32;
        Self {
            n,
            twiddle_offset,
            inv_twiddle_offset,
            command_offset,
            command_capacity: command_capacity as u32,
            data_offset: commands_end.next_multiple_of(8),
        }
    }

    /// Bytes of one sub-polynomial.
    pub fn sub_poly_bytes(&self) -> u32 {
        4 * self.n as u32
    }

    /// Offset of the sub-polynomial with index `index` in a packed operand area right after
    /// the command slots.
    pub fn operand_offset(&self, index: usize) -> u32 {
        self.data_offset + index as u32 * self.sub_poly_bytes()
    }
}

/// One prime's tables for the DPU: twiddles, inverse twiddles (consumption order) and Shoup
/// constants, all from [`pimhe_math::NttTable`], so that DPU results equal the CPU's.
#[derive(Debug, Clone)]
pub struct PrimeTables {
    /// The prime.
    pub modulus: Modulus,
    /// The CPU's table the DPU tables come from.
    pub table: NttTable,
    /// psi^bitrev(k) for k < N, then floor(psi^bitrev(k) 2^32 / q), then (N >= [`TABLE_MIN_N`])
    /// the multiplication tables of psi^bitrev(1..=7): [`table_words`] words.
    pub forward: Vec<u32>,
    /// Inverse twiddles in consumption order (slot 0 unused), then their Shoup constants, then
    /// (N >= [`TABLE_MIN_N`]) the tables of slots N-7 ..= N-1, slot N-1 times N^-1.
    pub inverse: Vec<u32>,
    /// N^-1 mod q.
    pub n_inv: u32,
    /// floor(N^-1 2^32 / q).
    pub n_inv_shoup: u32,
}

/// The tables a DPU serving prime `q` at degree `n` needs.
pub fn prime_tables(q: u32, n: usize) -> Result<PrimeTables, LayoutError> {
    if !n.is_power_of_two() || !(N_MIN..=N_MAX).contains(&n) {
        return Err(LayoutError::Degree(n));
    }
    if q >= Q_LIMIT || q as u64 % (2 * n as u64) != 1 {
        return Err(LayoutError::Modulus { q, n });
    }
    let modulus = Modulus::new(q as u64)?;
    let table = NttTable::new(modulus, n)?;
    let with_shoup = |t: &[u32]| {
        let mut v = t.to_vec();
        v.extend(t.iter().map(|&w| modulus.shoup(w % q)));
        v
    };
    let mut forward = with_shoup(table.forward_twiddles());
    let mut inverse = with_shoup(table.inverse_twiddles());
    let n_inv = table.n_inv();
    if n >= TABLE_MIN_N {
        let q64 = q as u64;
        let mul_table = |w: u64, out: &mut Vec<u32>| {
            for i in 0..4 {
                let c = (w << (8 * i)) % q64;
                out.extend((0..256u64).map(|x| (x * c % q64) as u32));
            }
        };
        for k in 1..=MUL_TABLES {
            mul_table(table.forward_twiddles()[k] as u64 % q64, &mut forward);
        }
        for k in n - MUL_TABLES..n {
            let mut w = table.inverse_twiddles()[k] as u64 % q64;
            if k == n - 1 {
                w = w * n_inv as u64 % q64;
            }
            mul_table(w, &mut inverse);
        }
    }
    Ok(PrimeTables { modulus, forward, inverse, n_inv, n_inv_shoup: modulus.shoup(n_inv), table })
}

impl PrimeTables {
    /// Ring degree N.
    pub fn degree(&self) -> usize {
        self.table.degree()
    }

    /// The header for these tables at `layout`, running `command_count` commands.
    pub fn header(&self, variant: Variant, layout: &MramLayout, command_count: u32) -> PimheHeader {
        let n = self.degree();
        let barrett = self.modulus.barrett_constant();
        PimheHeader {
            magic: PIMHE_MAGIC,
            n: n as u32,
            log_n: n.trailing_zeros(),
            q: self.modulus.value(),
            barrett_lo: barrett as u32,
            barrett_hi: (barrett >> 32) as u32,
            n_inv: self.n_inv,
            n_inv_shoup: self.n_inv_shoup,
            variant: variant as u32,
            twiddle_offset: layout.twiddle_offset,
            inv_twiddle_offset: layout.inv_twiddle_offset,
            command_offset: layout.command_offset,
            command_count,
            status: status::OK,
            reserved: [0; 2],
        }
    }
}

/// The bytes `[0, layout.data_offset)` of a DPU's MRAM: header, both tables and the commands
/// (unused command slots zero).
pub fn prime_image(
    tables: &PrimeTables,
    variant: Variant,
    layout: &MramLayout,
    commands: &[PimheCommand],
) -> Result<Vec<u8>, LayoutError> {
    if tables.degree() != layout.n {
        return Err(LayoutError::DegreeMismatch { tables: tables.degree(), layout: layout.n });
    }
    if commands.len() > layout.command_capacity as usize {
        return Err(LayoutError::TooManyCommands { count: commands.len(), capacity: layout.command_capacity });
    }
    let mut image = vec![0u8; layout.data_offset as usize];
    let header = tables.header(variant, layout, commands.len() as u32);
    image[..HEADER_BYTES].copy_from_slice(&header.to_bytes());
    let tw = layout.twiddle_offset as usize;
    words_to_bytes(&tables.forward, &mut image[tw..tw + 4 * tables.forward.len()]);
    let itw = layout.inv_twiddle_offset as usize;
    words_to_bytes(&tables.inverse, &mut image[itw..itw + 4 * tables.inverse.len()]);
    let cmd = layout.command_offset as usize;
    let bytes = commands_to_bytes(commands);
    image[cmd..cmd + bytes.len()].copy_from_slice(&bytes);
    Ok(image)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tables_carry_shoup_constants_and_reject_bad_parameters() {
        let t = prime_tables(12289, 1024).unwrap();
        let q = t.modulus;
        assert_eq!(t.forward.len(), 2048);
        assert_eq!(t.forward[5 + 1024], q.shoup(t.forward[5]));
        assert_eq!(t.inverse[1024 + 1023], q.shoup(t.inverse[1023]));
        assert_eq!(t.n_inv_shoup, q.shoup(t.n_inv));
        assert_eq!(prime_tables(12289, 8).unwrap_err(), LayoutError::Degree(8));
        assert_eq!(prime_tables(12289, 8192).unwrap_err(), LayoutError::Modulus { q: 12289, n: 8192 });
        let layout = MramLayout::new(1024, 1);
        assert!(matches!(
            prime_image(&t, Variant::Barrett, &layout, &[PimheCommand::ntt(0, 1); 2]),
            Err(LayoutError::TooManyCommands { count: 2, capacity: 1 })
        ));
        assert_eq!(layout.data_offset % 8, 0);
        assert_eq!(layout.operand_offset(2) - layout.operand_offset(1), 4096);
    }

    #[test]
    fn multiplication_tables_follow_the_shoup_constants_from_n_2048() {
        let n = 2048;
        let q = pimhe_math::ntt_primes(30, n, 1, &[]).unwrap()[0];
        let t = prime_tables(q, n).unwrap();
        assert_eq!((t.forward.len(), t.inverse.len()), (table_words(n), table_words(n)));
        let q64 = q as u64;
        let entry = |w: u64, i: u64, x: u64| (x * ((w << (8 * i)) % q64) % q64) as u32;
        // Forward table k - 1 is psi^bitrev(k); inverse table 6 is slot N - 1 times N^-1.
        let w3 = t.forward[3] as u64 % q64;
        assert_eq!(t.forward[2 * n + 2 * MUL_TABLE_WORDS + 256 + 77], entry(w3, 1, 77));
        let last = t.inverse[n - 1] as u64 % q64 * t.n_inv as u64 % q64;
        assert_eq!(t.inverse[2 * n + 6 * MUL_TABLE_WORDS + 3 * 256 + 255], entry(last, 3, 255));
        let layout = MramLayout::new(n, 1);
        assert_eq!(layout.inv_twiddle_offset - layout.twiddle_offset, 4 * table_words(n) as u32);
        assert_eq!(table_words(1024), 2048);
    }
}
