package providerconfig

import "testing"

func TestMonHost(t *testing.T) {
	cases := map[string]struct {
		in   []string
		want string
	}{
		"rook endpoints":    {[]string{"a=10.0.0.1:6789", "b=10.0.0.2:6789"}, "10.0.0.1:6789,10.0.0.2:6789"},
		"plain":             {[]string{"10.0.0.1:6789", " 10.0.0.2 "}, "10.0.0.1:6789,10.0.0.2"},
		"msgr2 vector":      {[]string{"[v2:10.0.0.1:3300,v1:10.0.0.1:6789]"}, "[v2:10.0.0.1:3300,v1:10.0.0.1:6789]"},
		"empty entries":     {[]string{"", " "}, ""},
		"ipv6 with a colon": {[]string{"[2001:db8::1]:6789"}, "[2001:db8::1]:6789"},
	}
	for name, tc := range cases {
		if got := MonHost(tc.in); got != tc.want {
			t.Errorf("%s: MonHost(%q) = %q, want %q", name, tc.in, got, tc.want)
		}
	}
}
