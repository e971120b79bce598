-- A member saves a URL once (issue 35): a unique index on (member_id, url),
-- the URL as the site is stored (normalised by the guard before saving).
--
-- A database written before may hold the same URL more than once for a
-- member (a reloaded form saved it again). Those rows are kept, with their
-- history, badges and webhook secrets, so that nothing a member embedded or
-- wired up breaks: every copy but the oldest (by created_at, then id) gets
-- the oldest's id in duplicate_of and is left out of the index, which
-- covers only the rows whose duplicate_of is ''. A new save of that URL is
-- sent to the oldest copy; a copy given another URL joins the index again.
ALTER TABLE sites ADD COLUMN duplicate_of TEXT NOT NULL DEFAULT '';
UPDATE sites SET duplicate_of = (
	SELECT o.id FROM sites AS o
	WHERE o.member_id = sites.member_id AND o.url = sites.url
	ORDER BY o.created_at, o.id LIMIT 1)
WHERE EXISTS (
	SELECT 1 FROM sites AS o
	WHERE o.member_id = sites.member_id AND o.url = sites.url
	AND (o.created_at < sites.created_at OR (o.created_at = sites.created_at AND o.id < sites.id)));
CREATE UNIQUE INDEX sites_member_url ON sites (member_id, url) WHERE duplicate_of = '';
