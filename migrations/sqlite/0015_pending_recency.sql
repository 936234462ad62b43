-- A publish pending review no longer stamps its skill's recency (it is stamped on approval), so
-- that nobody learns of a pending version from completion order or ClawHub's `updatedAt`. Skills
-- holding pending versions get the time of their last publish that is not pending (none for a
-- skill whose every version is pending, which name completion then leaves out).
UPDATE skills SET last_published_at = (
    SELECT max(v.published_at) FROM versions v WHERE v.skill_id = skills.id AND v.pending = 0
)
WHERE id IN (SELECT skill_id FROM versions WHERE pending != 0);
