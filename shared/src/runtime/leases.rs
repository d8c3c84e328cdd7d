//! Independent tasks leased to workers.
