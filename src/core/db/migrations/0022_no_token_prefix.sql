-- 0022 an API key keeps no characters of its token. `token_prefix` held the first 10 characters
-- (`psk_` and 6 of the secret part) to recognise a key in lists and exports; those 6 characters
-- are token material, so the column goes, with what existing rows stored in it. A key is
-- recognised by its id, which its creation answered together with the token.

ALTER TABLE api_keys DROP COLUMN token_prefix;
