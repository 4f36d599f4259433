//! docintel-trace
