package cache

import (
	"context"
	"fmt"
	"time"
)

// SetProgress implements Store.
func (m *MemoryStore) SetProgress(_ context.Context, p Progress) error {
	if err := checkProgress(p); err != nil {
		return fmt.Errorf("set progress: %w", err)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	now := m.tick()
	p.UpdatedAt = time.UnixMilli(now)
	exp := progressExpiry(p, now)
	p.Keep = 0 // a setting of the writer, not part of the entry
	m.progress[p.ID] = memProgress{p: p, exp: exp}
	return nil
}

// Progress implements Store.
func (m *MemoryStore) Progress(_ context.Context, id string) (Progress, bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	now := m.tick()
	mp, ok := m.progress[id]
	if !ok || now >= mp.exp {
		return Progress{}, false, nil
	}
	return mp.p, true, nil
}

// DropProgress implements Store.
func (m *MemoryStore) DropProgress(_ context.Context, id string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.progress, id)
	return nil
}
