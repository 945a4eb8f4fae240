//! The key the server signs the ServiceAccount tokens it issues with, kept in the data directory so tokens
//! survive a restart.

use sha2::{Digest, Sha256};
use std::path::Path;

const KEY_FILE: &str = "sa-signing.key";

/// The key tokens are signed with.
pub struct SigningKey(Vec<u8>);

impl SigningKey {
    /// Loads the key from `dir` (creating it there on first start), or makes a fresh one in memory.
    pub fn load_or_create(dir: Option<&Path>) -> std::io::Result<SigningKey> {
        let fresh = || crate::auth::authenticate::new_token().into_bytes();
        let Some(dir) = dir else {
            return Ok(SigningKey(fresh()));
        };
        let path = dir.join(KEY_FILE);
        match std::fs::read(&path) {
            Ok(bytes) if !bytes.is_empty() => Ok(SigningKey(bytes)),
            _ => {
                let key = fresh();
                std::fs::write(&path, &key)?;
                Ok(SigningKey(key))
            }
        }
    }

    pub fn mac(&self, message: &[u8]) -> Vec<u8> {
        let mut key = [0u8; 64];
        if self.0.len() > 64 {
            key[..32].copy_from_slice(&Sha256::digest(&self.0));
        } else {
            key[..self.0.len()].copy_from_slice(&self.0);
        }
        let pad = |byte: u8| key.iter().map(|k| k ^ byte).collect::<Vec<u8>>();
        let inner = Sha256::new()
            .chain_update(pad(0x36))
            .chain_update(message)
            .finalize();
        Sha256::new()
            .chain_update(pad(0x5c))
            .chain_update(inner)
            .finalize()
            .to_vec()
    }
}
