//! docintel-question
