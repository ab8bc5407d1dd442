//! CRC-32C (Castagnoli), the integrity check of the `.ninfer` container (docs/container.md).
//!
//! Reflected polynomial `0x82F63B78`, initial value `0xFFFFFFFF`, final XOR `0xFFFFFFFF` (the
//! iSCSI / RFC 3720 CRC, the one SSE4.2 `crc32` and ARMv8 `crc32c` compute). Written by hand
//! because the core takes no crates beyond `half`: a slice-by-8 table walk, every table built at
//! compile time by a `const fn`, no `unsafe`, no allocation. The std writer may use a hardware
//! implementation; the facade's tests check that both agree.

/// The reflected Castagnoli polynomial.
pub const POLY: u32 = 0x82F6_3B78;

const fn make_tables() -> [[u32; 256]; 8] {
    let mut t = [[0u32; 256]; 8];
    let mut i = 0;
    while i < 256 {
        let mut c = i as u32;
        let mut k = 0;
        while k < 8 {
            c = if c & 1 != 0 { (c >> 1) ^ POLY } else { c >> 1 };
            k += 1;
        }
        t[0][i] = c;
        i += 1;
    }
    let mut i = 0;
    while i < 256 {
        let mut s = 1;
        while s < 8 {
            let prev = t[s - 1][i];
            t[s][i] = (prev >> 8) ^ t[0][(prev & 0xff) as usize];
            s += 1;
        }
        i += 1;
    }
    t
}

/// The eight slice-by-8 tables; `TABLES[0]` is the classic byte-at-a-time table.
pub const TABLES: [[u32; 256]; 8] = make_tables();

/// Continue a CRC-32C: `crc32c_append(crc32c(a), b) == crc32c(a ++ b)`.
pub const fn crc32c_append(crc: u32, bytes: &[u8]) -> u32 {
    let t = &TABLES;
    let mut c = !crc;
    let mut i = 0;
    let n = bytes.len();
    while i + 8 <= n {
        let lo = c ^ u32::from_le_bytes([bytes[i], bytes[i + 1], bytes[i + 2], bytes[i + 3]]);
        let hi = u32::from_le_bytes([bytes[i + 4], bytes[i + 5], bytes[i + 6], bytes[i + 7]]);
        c = t[7][(lo & 0xff) as usize]
            ^ t[6][((lo >> 8) & 0xff) as usize]
            ^ t[5][((lo >> 16) & 0xff) as usize]
            ^ t[4][(lo >> 24) as usize]
            ^ t[3][(hi & 0xff) as usize]
            ^ t[2][((hi >> 8) & 0xff) as usize]
            ^ t[1][((hi >> 16) & 0xff) as usize]
            ^ t[0][(hi >> 24) as usize];
        i += 8;
    }
    while i < n {
        c = (c >> 8) ^ t[0][((c ^ bytes[i] as u32) & 0xff) as usize];
        i += 1;
    }
    !c
}

/// CRC-32C of `bytes`.
pub const fn crc32c(bytes: &[u8]) -> u32 {
    crc32c_append(0, bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Bit-at-a-time reference, straight from the definition.
    fn crc32c_bitwise(bytes: &[u8]) -> u32 {
        let mut c = !0u32;
        for &b in bytes {
            c ^= b as u32;
            for _ in 0..8 {
                c = if c & 1 != 0 { (c >> 1) ^ POLY } else { c >> 1 };
            }
        }
        !c
    }

    #[test]
    fn standard_check_value_and_rfc3720_vectors() {
        // The CRC catalogue's check value for CRC-32/ISCSI.
        assert_eq!(crc32c(b"123456789"), 0xE306_9283);
        assert_eq!(crc32c(b""), 0);
        // RFC 3720 appendix B.4.
        assert_eq!(crc32c(&[0u8; 32]), 0x8A91_36AA);
        assert_eq!(crc32c(&[0xffu8; 32]), 0x62A8_AB43);
        let inc: [u8; 32] = core::array::from_fn(|i| i as u8);
        assert_eq!(crc32c(&inc), 0x46DD_794E);
        let dec: [u8; 32] = core::array::from_fn(|i| 31 - i as u8);
        assert_eq!(crc32c(&dec), 0x113F_DB5C);
    }

    #[test]
    #[cfg_attr(miri, ignore)]
    fn slice_by_8_matches_bitwise_at_every_length_and_split() {
        let data: [u8; 300] =
            core::array::from_fn(|i| (i as u32).wrapping_mul(2_654_435_761).to_le_bytes()[3]);
        for len in 0..data.len() {
            let want = crc32c_bitwise(&data[..len]);
            assert_eq!(crc32c(&data[..len]), want, "len {len}");
            for split in [0, 1, 7, 8, len / 2, len] {
                let split = split.min(len);
                let got = crc32c_append(crc32c(&data[..split]), &data[split..len]);
                assert_eq!(got, want, "len {len} split {split}");
            }
        }
    }

    #[test]
    fn const_evaluation_works() {
        const C: u32 = crc32c(b"123456789");
        assert_eq!(C, 0xE306_9283);
    }
}
