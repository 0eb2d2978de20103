-- The audit trail is written before the action it records (outcome {"pending": true}) and finished once with
-- what came of it, so an action whose entry cannot be written is refused rather than done unrecorded. Past that
-- single finishing update an entry is never changed, and no entry is deleted: a trigger refuses both, for every
-- role including the table's owner (who can only lift it knowingly, ALTER TABLE ... DISABLE TRIGGER).
-- docs/admin-api.md#audit-trail
CREATE FUNCTION jfast_audit_append_only() RETURNS trigger
LANGUAGE plpgsql
AS $$
BEGIN
  IF TG_OP = 'UPDATE'
     AND OLD.outcome = '{"pending": true}'::jsonb
     AND (NEW.id, NEW.at, NEW.actor, NEW.role, NEW.action, NEW.filter) IS NOT DISTINCT FROM (OLD.id, OLD.at, OLD.actor, OLD.role, OLD.action, OLD.filter)
  THEN
    RETURN NEW;
  END IF;
  RAISE EXCEPTION 'the admin audit trail is append-only: % of a recorded entry refused', lower(TG_OP)
    USING ERRCODE = 'insufficient_privilege',
          HINT = 'entries are finished once and never changed or deleted; an owner may lift the rule with ALTER TABLE jfast_admin_audit DISABLE TRIGGER USER';
END
$$;

CREATE TRIGGER jfast_admin_audit_append_only BEFORE UPDATE OR DELETE ON jfast_admin_audit
  FOR EACH ROW EXECUTE FUNCTION jfast_audit_append_only();
CREATE TRIGGER jfast_admin_audit_no_truncate BEFORE TRUNCATE ON jfast_admin_audit
  FOR EACH STATEMENT EXECUTE FUNCTION jfast_audit_append_only();
