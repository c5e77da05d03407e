package loopback

import "testing"

func TestCheckURL(t *testing.T) {
	tests := []struct {
		name, url string
		ok        bool
	}{
		{"ipv4Loopback", "http://127.0.0.1:8080", true},
		{"ipv4LoopbackRange", "http://127.1.2.3:8080/", true},
		{"ipv6Loopback", "http://[::1]:8080", true},
		{"localhost", "http://localhost:8080", true},
		{"localhostUpper", "https://LOCALHOST", true},
		{"privateAddressRefused", "http://10.0.0.5:8080", false},
		{"publicAddressRefused", "http://93.184.216.34", false},
		{"unspecifiedRefused", "http://0.0.0.0:8080", false},
		{"ipv6UnspecifiedRefused", "http://[::]:8080", false},
		{"hostnameRefused", "http://example.com", false},
		{"loopbackLookalikeRefused", "http://127.0.0.1.example.com", false},
		{"localhostSubdomainRefused", "http://localhost.example.com", false},
		{"userinfoTrickRefused", "http://127.0.0.1@example.com", false},
		{"otherSchemeRefused", "ftp://127.0.0.1", false},
		{"noHostRefused", "http://", false},
		{"notAURLRefused", "127.0.0.1:8080", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := CheckURL(tt.url)
			if (err == nil) != tt.ok {
				t.Errorf("CheckURL(%q) = %v, want ok=%v", tt.url, err, tt.ok)
			}
		})
	}
}

func TestCheckDatabaseURL(t *testing.T) {
	for url, ok := range map[string]bool{
		"mysql://root@127.0.0.1:3306/msgbench": true,
		"mysql://root@localhost/msgbench":      true,
		"mysql://root@db.internal:3306/prod":   false,
		"mysql://root@10.1.1.1:3306/prod":      false,
		"sqlite:./data/messages.db":            false,
	} {
		if err := CheckDatabaseURL(url); (err == nil) != ok {
			t.Errorf("CheckDatabaseURL(%q) = %v, want ok=%v", url, err, ok)
		}
	}
}

func TestDialControl(t *testing.T) {
	for addr, ok := range map[string]bool{"127.0.0.1:80": true, "[::1]:80": true, "10.0.0.1:80": false, "192.168.1.1:443": false} {
		if err := DialControl("tcp", addr, nil); (err == nil) != ok {
			t.Errorf("DialControl(%q) = %v, want ok=%v", addr, err, ok)
		}
	}
}
