//! Wire formats: lossless conversion between [`crate::Message`] and the providers' JSON.
