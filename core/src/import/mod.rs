//! Importers for agent transcript formats found in the wild.
