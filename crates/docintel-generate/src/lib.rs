//! docintel-generate
