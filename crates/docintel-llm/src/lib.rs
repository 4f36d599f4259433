//! docintel-llm
