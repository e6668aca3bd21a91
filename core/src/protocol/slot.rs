//! Redis Cluster slot of a key: CRC16/XMODEM over the hashtag, mod 16384
//! (PROTOCOL.md §3). Every key of one queue shares the queue's slot.

/// CRC16/XMODEM: poly 0x1021, init 0, no reflection.
pub fn crc16(data: &[u8]) -> u16 {
    let mut crc: u16 = 0;
    for &byte in data {
        crc ^= (byte as u16) << 8;
        for _ in 0..8 {
            crc = if crc & 0x8000 != 0 {
                (crc << 1) ^ 0x1021
            } else {
                crc << 1
            };
        }
    }
    crc
}

/// The bytes the cluster hashes: between the first `{` and the next `}` when
/// that span is non-empty, else the whole key.
pub fn hashtag(key: &[u8]) -> &[u8] {
    if let Some(open) = key.iter().position(|&b| b == b'{') {
        if let Some(len) = key[open + 1..].iter().position(|&b| b == b'}') {
            if len > 0 {
                return &key[open + 1..open + 1 + len];
            }
        }
    }
    key
}

/// The cluster slot (0..16384) of a key.
pub fn slot(key: &[u8]) -> u16 {
    crc16(hashtag(key)) % 16384
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn vectors() {
        assert_eq!(slot(b"123456789"), 12739);
        assert_eq!(slot(b"emq:{orders}:pending"), 105);
        assert_eq!(slot(b"emq:{orders}:job:ORD0NgWEfAEJfs"), 105);
        assert_eq!(slot(b"emq:{fills}:active"), 4165);
        assert_eq!(slot(b"emq:{payments}:meta"), 8507);
        assert_eq!(slot(b"{emq}:version"), 9051);
        assert_eq!(slot(b"{}abc"), slot(b"{}abc"));
        assert_eq!(hashtag(b"{}abc"), b"{}abc");
    }
}
