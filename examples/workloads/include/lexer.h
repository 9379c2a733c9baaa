/* The team's lexer: splits text into tokens at a delimiter. */
#ifndef LEXER_H
#define LEXER_H

#define LEXER_DELIMITER ','

/* Counts the tokens of a NUL-terminated input, each ended by LEXER_DELIMITER. */
long long lexer_count_tokens(const char *input);

#endif
