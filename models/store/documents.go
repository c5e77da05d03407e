package store

import (
	"context"
	"slices"

	"messages/models"
)

// TrustDocuments adds the documents of one manifest, all or none: an id already trusted
// for another text refuses the whole manifest (a conflict, naming the id), and one
// already trusted for the same text is left as it is. It returns how many were new.
func (s *Store) TrustDocuments(ctx context.Context, docs []models.TrustedDocument) (int, error) {
	added := 0
	err := s.Transaction(ctx, func(ctx context.Context) error {
		ids := make([]string, len(docs))
		for i, d := range docs {
			ids[i] = d.ID
		}
		var known []models.TrustedDocument
		for chunk := range slices.Chunk(ids, 500) {
			var part []models.TrustedDocument
			if err := s.conn(ctx).Select("id", "sha256").Where("id IN ?", chunk).Find(&part).Error; err != nil {
				return err
			}
			known = append(known, part...)
		}
		sums := make(map[string]string, len(known))
		for _, k := range known {
			sums[k.ID] = k.SHA256
		}
		var fresh []models.TrustedDocument
		for _, d := range docs {
			sum, ok := sums[d.ID]
			switch {
			case ok && sum != d.SHA256:
				return models.Errorf(models.ECONFLICT, "document %q is already trusted with another text; remove it first (documents remove %s)", d.ID, d.ID)
			case ok:
				continue
			}
			sums[d.ID] = d.SHA256
			d.CreatedAt = s.Now().UTC()
			fresh = append(fresh, d)
		}
		added = len(fresh)
		if len(fresh) == 0 {
			return nil
		}
		return s.conn(ctx).CreateInBatches(fresh, 100).Error
	})
	if err != nil {
		return 0, err
	}
	return added, nil
}

// TrustedDocuments returns every trusted document, oldest first.
func (s *Store) TrustedDocuments(ctx context.Context) ([]models.TrustedDocument, error) {
	var docs []models.TrustedDocument
	return docs, s.conn(ctx).Order("created_at, id").Find(&docs).Error
}

// TrustedDocumentsByID returns the trusted documents of the given ids that exist.
func (s *Store) TrustedDocumentsByID(ctx context.Context, ids []string) ([]models.TrustedDocument, error) {
	var docs []models.TrustedDocument
	for chunk := range slices.Chunk(ids, 500) {
		var part []models.TrustedDocument
		if err := s.conn(ctx).Where("id IN ?", chunk).Find(&part).Error; err != nil {
			return nil, err
		}
		docs = append(docs, part...)
	}
	return docs, nil
}

// TrustedDocumentIDs returns the id of every trusted document: what each instance reads
// every few seconds to learn what was added or removed, reading the texts of new ids only.
func (s *Store) TrustedDocumentIDs(ctx context.Context) ([]string, error) {
	var ids []string
	return ids, s.conn(ctx).Model(&models.TrustedDocument{}).Order("id").Pluck("id", &ids).Error
}

// RemoveTrustedDocument stops trusting the document with the given id, or every document
// whose text has the SHA-256 of "sha256:<hex>". It returns how many it removed; none is a
// not-found error.
func (s *Store) RemoveTrustedDocument(ctx context.Context, id string) (int, error) {
	q := s.conn(ctx).Where("id = ?", id)
	if sum, ok := models.DocumentSHA256(id); ok {
		q = q.Or("sha256 = ?", sum)
	}
	res := q.Delete(&models.TrustedDocument{})
	if res.Error != nil {
		return 0, res.Error
	}
	if res.RowsAffected == 0 {
		return 0, errNotFound("trusted document")
	}
	return int(res.RowsAffected), nil
}
