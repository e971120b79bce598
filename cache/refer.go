package cache

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"time"
)

// blobRef is the format byte of a reference made by Refer: after it, the
// result's age when it was answered (8 bytes, big-endian milliseconds) and
// the id of the report it points at. It is stored where reports are kept.
const blobRef byte = '>'

// refBlob encodes a reference to the report target, answered at age.
func refBlob(target string, age time.Duration) []byte {
	b := make([]byte, 9, 9+len(target))
	b[0] = blobRef
	binary.BigEndian.PutUint64(b[1:9], uint64(max(age.Milliseconds(), 0)))
	return append(b, target...)
}

// parseRef decodes a reference; ok is false when blob is a report.
func parseRef(blob []byte) (target string, age time.Duration, ok bool, err error) {
	if len(blob) == 0 || blob[0] != blobRef {
		return "", 0, false, nil
	}
	if len(blob) < 10 {
		return "", 0, true, errors.New("decode reference: too short")
	}
	target = string(blob[9:])
	if err := checkID(target); err != nil {
		return "", 0, true, fmt.Errorf("decode reference: %w", err)
	}
	return target, ms(int64(binary.BigEndian.Uint64(blob[1:9]))), true, nil
}

// checkRefer validates Refer's arguments: a usable id that differs from
// the entry it refers to.
func checkRefer(id string, e Entry) error {
	if err := checkID(id); err != nil {
		return fmt.Errorf("refer: %w", err)
	}
	if err := checkID(e.ID); err != nil {
		return fmt.Errorf("refer %s: %w", id, err)
	}
	if id == e.ID {
		return fmt.Errorf("refer %s: a reference needs an id of its own", id)
	}
	return nil
}

// referred is the entry a reference answers: target's report under the
// reference's id, with the age it had when it was answered.
func referred(id string, age time.Duration, target Entry) Entry {
	target.ID, target.Age, target.Referred = id, age, true
	return target
}

// Refer implements Store: the reference lives in the archive, beside the
// report it points at, until that report expires.
func (s *SQLiteStore) Refer(ctx context.Context, id string, e Entry) error {
	if err := checkRefer(id, e); err != nil {
		return err
	}
	return referInArchive(ctx, s.archive, s.limits, id, e, s.clock())
}

// Refer implements Store: in the archive, with a copy in Redis while the
// result is cached, as reports have, so every instance can answer it.
func (s *RedisStore) Refer(ctx context.Context, id string, e Entry) error {
	if err := checkRefer(id, e); err != nil {
		return err
	}
	if err := referInArchive(ctx, s.archive, s.limits, id, e, s.localNow()); err != nil {
		return err
	}
	return s.putReport(ctx, id, "0", refBlob(e.ID, e.Age))
}

// referInArchive stores the reference id to e in a, expiring with e's report.
func referInArchive(ctx context.Context, a Archive, l Limits, id string, e Entry, now int64) error {
	at := time.UnixMilli(now)
	exp := e.CompletedAt.Add(l.ReportTTL)
	if !exp.After(at) {
		return fmt.Errorf("refer %s: %w", e.ID, ErrNotFound)
	}
	if err := a.PutReport(ctx, id, refBlob(e.ID, e.Age), false, at, exp); err != nil {
		return archiveError("store reference "+id, err)
	}
	return nil
}
